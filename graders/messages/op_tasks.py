"""Task 1.1 and the op tasks: the backward rules (graders/judge/checks/ops.py), one hint per op form of the op
registry (graders/ops.py), and the mistakes a rule's numbers can name.

A hint names what to think about, never the formula.
"""

OP_UPSTREAM = "  g = {value}   (the upstream gradient)"
OP_CONSTANT = "  constant {value!r}"
OP_RETURNS_ONE = "dL/d{name} of shape {shape}"
HINT_ADD = ("how much out moves when x (or y) moves, times g; each summed back to its input's shape "
            "(unbroadcast)")
HINT_SUB = HINT_ADD  # the same sum rule, the sign aside
HINT_ADD_CONSTANT = "a constant gets no gradient: one gradient, for the Tensor"
HINT_SUB_CONSTANT = "a constant gets no gradient; mind the sign y enters out with"
HINT_NEG = "mind the sign x enters out with"
HINT_MUL = ("the derivative of a product by one factor involves the other factor; each summed back to its input's "
            "shape")
HINT_MUL_CONSTANT = "the derivative of x * c by x, for a constant c, times g"
HINT_DIV = "differentiate x * (1 / y) by each of x and y; each summed back to its input's shape"
HINT_DIV_CONSTANT = "differentiate c * (1 / y) by y, for a constant c"
HINT_MATMUL = ("write one entry of out as a sum over the shared axis and differentiate; the gradients' shapes leave "
               "one way to combine g with the other matrix")
HINT_POW = "the power rule of calculus, times g"
HINT_EXP = "exp is its own derivative, and the forward's out is at hand"
HINT_LOG = "the derivative of log, times g"
HINT_RELU = "relu's slope is 1 where x > 0 and 0 elsewhere"
HINT_RELU_AT_ZERO = "PyTorch takes relu's slope at exactly 0 as 0"
HINT_RELU_MASK = ("relu's gradient is g where x > 0 and 0 where x <= 0: it masks g by the input's sign (here it is "
                  "wrong at a negative x too, not only at 0)")
HINT_TANH = "tanh's derivative is simplest written with its output out"
HINT_SIGMOID = "sigmoid's derivative is simplest written with its output out"
HINT_SUM = "every element gets the g of the sum it went into: put the summed axes back, then broadcast"
HINT_MEAN = "like sum's rule, divided by the number of elements averaged together"
HINT_SQUARE_MEAN = ("a mean of squares: the square's derivative, and the mean's division by the number of "
                    "elements")
HINT_RESHAPE = "reshape only moves entries: nothing is scaled, only the shape goes back"
HINT_T = "a transpose only moves entries: reverse the axes back"
# Mistakes a rule's numbers show (ops.MISTAKES computes the gradient each one gives): the mistake, named.
HINT_SIGMOID_EXTREMES = ("use the forward's out: sigmoid's slope is out * (1 - out), finite for every x, where a "
                         "formula in exp(-x) overflows to inf / inf = nan for large negative x")
RULE_WROTE_INTO_G = ("Task {task} ({title}): the backward rule of {op} changed g, the upstream gradient it was "
                     "given, in place")
HINT_RULE_WROTE_INTO_G = ("compute new arrays (g * mask, g * out) and never write into g (g[...] = ..., g *= ...): "
                          "an engine may hand the same g to several rules, and each must see it as it was")
RAISED_KEY_ID = "{error} on a key that is an id() (an object's memory address: the object was never stored)"
HINT_ENGINE_KEY_ERROR = ("a node's gradient was looked up before any was stored for it: walk the nodes in reverse "
                         "topological order (the output first, each node only after every node that uses it)")
# The hint of an exception that names its mistake: (task id prefix, exception class) -> hint.
HINT_AXIS_FORMS = ("axis may be None, an int (negative too) or a tuple of ints, as in numpy and torch: count what "
                   "was reduced as x.size // out.size, and let the given _keep_reduced_axes put the axes back, rather "
                   "than indexing shape[axis]")
HINTS_FOR_RAISED = {("2.", "KeyError"): HINT_ENGINE_KEY_ERROR, ("1.7", "TypeError"): HINT_AXIS_FORMS}
HINT_OP_MISTAKES = {
    "forgets_g": ("the local derivative alone: the chain rule multiplies it by g, the gradient arriving from the "
                  "output"),
    "mul_x_by_itself": ("the gradient for x was multiplied by x itself; a product's derivative by one factor "
                        "involves the other factor"),
    "mul_y_by_itself": ("the gradient for y was multiplied by y itself; a product's derivative by one factor "
                        "involves the other factor"),
    "div_no_numerator": "that is the derivative of 1 / y alone: the numerator x is missing",
    "pow_not_lowered": "the power was not lowered by one",
    "exp_unchanged": "g passed on unchanged: exp's own derivative is never multiplied in",
    "log_multiplied": "multiplied by x, where log's derivative divides by it",
    "relu_at_zero": "the gradient passes at exactly x = 0, where PyTorch's slope is 0",
    "tanh_of_input": "the input x was used where the rule needs tanh's output out",
    "tanh_not_squared": "the output appears, but not squared",
    "sigmoid_of_input": "the input x was used where the rule needs sigmoid's output out",
    "sigmoid_half": "half the derivative: a factor with (1 - out) is missing",
    "square_mean_not_divided": "not divided by the number of elements averaged",
    "square_mean_no_two": "the square's factor 2 is missing",
}
UNBROADCAST_INPUT = "  grad = {value}"
UNBROADCAST_SOURCE = "the gradient summed over the broadcast axes"
HINT_UNBROADCAST = "sum away the extra leading axes, then sum (keepdims) every axis where the target has size 1"
