"""Task 6: the same loop in PyTorch (graders/judge/checks/torch_loop.py), on the judge's device or on CUDA; and the
hints an error's own words name, whatever the task.
"""

TORCH_SETUP = ("  model MLP 1-{hidden}-1 float64, {n} examples in batches of {batch_size} ({batches} batches), "
               "{n_val} for validation, SGD(lr={lr:g}, momentum={momentum:g}), {loss}, {epochs} epochs, "
               "device={device!r}")
TORCH_JUDGES_DEVICE = ("  {device!r} is the judge's device: it computes on the CPU, a model or batch left on the CPU "
                       "fails there as on a GPU, and the model's output moves by {shift:g} when it computes there")
TORCH_SOURCE = "the reference fit_torch on {device!r}, same weights and batches"
TORCH_DEVICE_NOT_SEEN = ("whether fit_torch computed on the GPU: the .to() calls checked here are noted inside the "
                         "process that runs your code, and float64 results agree on both devices, so nothing the "
                         "grader sees from outside shows where the work was done")
HINT_TORCH_MOVE_MODEL = "move the model once, before training: model.to(device)"
HINT_TORCH_MOVE_BATCHES = ("move every batch, inputs and targets, in training and in validation, with .to(device), "
                           "as the model")
HINT_TORCH_NOT_MOVED = ("these are the numbers of a run that stayed on the CPU: fit_torch moved neither the model "
                        "nor the batches to the device it was given. Call model.to(device) once, and xb.to(device), "
                        "yb.to(device) for every batch")
HINT_TORCH_OWN_TENSOR = ("a tensor on the device met one on the CPU: make your own tensors on the device "
                         "(torch.zeros(..., device=device)), or keep Python floats (loss.item())")
TORCH_MODEL_NOT_MOVED = ("Task {task} ({title}): fit_torch never called model.to({device!r}) (the .to() calls "
                         "seen: {calls}).\n  hint: " + HINT_TORCH_MOVE_MODEL)
TORCH_BATCH_NOT_MOVED = ("Task {task} ({title}): {count} of the {total} batch tensors the loaders yielded were "
                         "never moved with .to({device!r}) (the first: {which}).\n"
                         "  hint: " + HINT_TORCH_MOVE_BATCHES)
# How torch's error for an op given tensors on two devices begins (the judge's device raises it too, in torch's words)
TORCH_TWO_DEVICES = "Expected all tensors to be on the same device"
TORCH_LEFT_BEHIND = ("Task {task} ({title}): on device={device!r}, {what} stayed on the CPU, so fit_torch raised "
                     "{error}\n"
                     "  {device!r} is the judge's device, on which a tensor left on the CPU fails, as on a GPU\n"
                     "  hint: {hint}")
TORCH_LEFT_MODEL = "the model (its .to() calls: {calls})"
TORCH_LEFT_BATCH = "{which} (never moved with .to(device))"
HINT_BACKWARD_SCALAR = ("call backward() on the loss, a tensor of one element: backward() without a gradient is "
                        "defined only for a scalar, so a tensor of one value per example cannot start it")
# What an error's own words say went wrong, whatever the task (the engine, the stand-ins and torch raise these).
HINTS_FOR_RAISED_TEXT = {"grad can be implicitly created only for scalar outputs": HINT_BACKWARD_SCALAR}
HINT_TORCH_TRAIN = "call model.train() at the start of every epoch: validation left the model in eval mode"
HINT_TORCH_EVAL = "call model.eval() before the validation loop"
HINT_TORCH_NO_GRAD = "run the validation loop inside `with torch.no_grad():`"
HINT_TORCH_GRAD = "keep torch.no_grad() around the validation loop only"
HINT_TORCH_NEVER_STEPPED = ("the parameters after fit_torch are the ones it started from: no step moved them. Per "
                            "batch: optimizer.zero_grad(), forward, loss, loss.backward(), then optimizer.step() (a "
                            "step before backward() finds the gradients zero_grad() just cleared)")
HINT_TORCH_ZERO_GRAD_EPOCH = ("the run matches one that clears gradients once an epoch, so each step adds up every "
                              "batch's gradient so far: call optimizer.zero_grad() for every batch, inside the loop "
                              "over the batches")
HINT_TORCH_ZERO_GRAD = ("the run matches one that never clears gradients: call optimizer.zero_grad() before each "
                        "backward")
