"""The lesson's worked examples: each is the notebook's code cell after the words of its part (nbgrader_lesson.PARTS),
its function's body (cell_source.body_of). They use numpy alone, never the student's files, so they run the same
on every submission; an example after the first uses the ``np`` that the setup cell imported.
"""

import numpy as np


def example_1():
    # Worked example (numpy only): the chain rule by hand, checked by central differences.
    import numpy as np

    def loss(w, x=1.5, b=0.5):
        return (w * x + b) ** 2

    w, x, b = 2.0, 1.5, 0.5
    out = w * x + b            # forward: out = 3.5, L = out ** 2 = 12.25
    d_out = 2 * out            # dL/d_out = 7.0
    d_w = d_out * x            # the rule of *: dL/dw = g * x = 10.5
    h = 1e-6
    numeric = (loss(w + h) - loss(w - h)) / (2 * h)
    print(f"dL/dw by the chain rule: {d_w}, by central differences: {numeric:.6f}")

    # Broadcasting: a bias of shape (3,) added to every row of a (4, 3) batch.
    g = np.ones((4, 3))        # the gradient arriving at x + b
    print("dL/db =", g.sum(axis=0), "(summed over the 4 rows it was used in, shape (3,))")


def example_2():
    # Worked example (plain Python): a reverse topological order by depth-first search.
    # Each node lists the nodes it was computed from: loss = (a * b) + a.
    parents = {"loss": ["prod", "a"], "prod": ["a", "b"], "a": [], "b": []}

    def order_from(root):
        seen, order = set(), []
        def visit(node):
            if node not in seen:
                seen.add(node)
                for parent in parents[node]:
                    visit(parent)
                order.append(node)         # after everything it depends on
        visit(root)
        return order[::-1]                 # reversed: every node before the nodes it depends on

    print(order_from("loss"))              # 'a' comes after both of its users, 'loss' and 'prod'


def example_3():
    # Worked example (numpy only): gradient descent on L(p) = (p - 3) ** 2, whose gradient is 2 (p - 3).
    p, lr = np.array([0.0]), 0.25
    for step in range(1, 5):
        grad = 2 * (p - 3)
        p -= lr * grad                     # in place, like SGD.step
        print(f"step {step}: p = {p[0]:.4f}")


def example_4():
    # Worked example (numpy only): how many batches an epoch has.
    n, batch_size = 10, 4
    print("batches:", -(-n // batch_size), "(the last one has", n % batch_size, "examples);",
          "with drop_last:", n // batch_size)


def example_5():
    # Worked example (numpy only): the whole loop for a line y = w x + b, gradients by hand.
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=64)
    y = 3 * x + 1 + rng.normal(0, 0.1, size=64)
    w, b, lr = 0.0, 0.0, 0.1
    for epoch in range(1, 31):
        for start in range(0, 64, 16):                 # batches of 16, in order
            xb, yb = x[start:start + 16], y[start:start + 16]
            error = w * xb + b - yb
            d_w, d_b = np.mean(2 * error * xb), np.mean(2 * error)   # d/dw and d/db of mean(error ** 2)
            w, b = w - lr * d_w, b - lr * d_b
        if epoch % 10 == 0:
            print(f"epoch {epoch}: w = {w:.3f}, b = {b:.3f}, MSE = {np.mean((w * x + b - y) ** 2):.4f}")
