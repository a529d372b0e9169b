"""Attacks on the second chance that succeed on the engine as it stands (docs/guarantees.md, "The
second chance, with nothing of the course's in the kernel"). Each test states the promise it
holds the engine to; each fails until the engine keeps that promise.

1. Code of the kernel's, run by the grader. The grader checks every function marker of a
   stand-in's request against those the suite passed, but its search (``wire.function_markers``)
   counts two levels for each ``__tuple__`` or ``__dict__`` wrapper where the reader that rebuilds
   them (``wire.decode``) counts one, and it gives up silently past ``MAX_DEPTH``: a marker inside
   twelve tuples is never checked, and the child evaluates its ``__lambda__`` text, as the grading
   user. A blank notebook uses that to score 16 of 42 on 02-scoring and to read the solution
   notebook into its kernel.
2. A grader held forever. The grader answers every ``input_request`` of the call with a blocking
   zmq send; a kernel that sends thousands of them and reads no answer fills the queues between
   them, and the grader waits in ``send`` past every deadline (its budget, the call's timeout),
   with the kernel and the course's child process alive beside it.
3. A backward pass that differentiates the course's forward pass. The hidden tests of
   ``attention_backward`` (08) and ``transformer_block_backward`` (11) call the forward pass; when
   the learner's forward fails, the course's forward is put in the learner's namespace for the
   backward's second chance, although the course's backward does not use it. A backward that
   knows nothing of attention (central differences of whatever ``attention_forward`` is) then
   scores full marks beside a stub forward: the learner wrote neither function.
"""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.engine import grade, kernel, notebook, reference, wire
from autograder.engine.oracle import Oracle
from autograder.engine.options import Options
from support import COURSE, sandbox_mode, with_answers, write_notebook

SCORING = COURSE.assignment("02-scoring")
LEARNING = COURSE.assignment("08-learning-to-attend")
BLOCK = COURSE.assignment("11-transformer-block")
TESTS = Path(__file__).resolve().parents[1]


def options(**settings):
    return Options(sandbox=sandbox_mode(), figures="off", **settings)


def solution_source(assignment, grade_id):
    for cell in reference.definition_cells(notebook.load(assignment.solution)):
        if notebook.grade_id(cell) == grade_id:
            return notebook.source(cell)
    raise LookupError(grade_id)


def reference_lines(assignment):
    """Lines of the course's solution code that no learner code shares (as in
    test_grade_second_chance.reference_lines, for any assignment)."""
    lines = set()
    for cell in reference.definition_cells(notebook.load(assignment.solution)):
        for line in notebook.source(cell).splitlines():
            line = line.strip()
            if len(line) > 12 and not line.startswith(("#", '"', "def ", "return")) and \
                    '"""' not in line:
                lines.add(line)
    return lines


# ================================================================ 1. code of the kernel's

def nested(marker, wrappers):
    """``marker`` inside the given wrappers, innermost first: "tuple", "dict" or "list"."""
    for wrapper in wrappers:
        marker = {"tuple": lambda m: {"__tuple__": [m]}, "dict": lambda m: {"__dict__": {"k": m}},
                  "list": lambda m: [m]}[wrapper](marker)
    return marker


DEPTHS = {"12 tuples": ["tuple"] * 12, "12 dicts": ["dict"] * 12,
          "6 tuples in 6 lists": ["tuple"] * 6 + ["list"] * 6, "20 lists": ["list"] * 20,
          "23 tuples": ["tuple"] * 23}


@pytest.mark.parametrize("wrappers", list(DEPTHS.values()), ids=list(DEPTHS))
def test_a_function_marker_at_any_depth_is_checked_before_the_child_rebuilds_it(wrappers,
                                                                                 tmp_path):
    """The child evaluates a marker's text only if it is one the suite passed in the call: a
    marker of the kernel's own, however deep in tuples, dicts and lists, is refused and never
    evaluated (here it would write a file)."""
    planted = tmp_path / "planted"
    evil = {"__lambda__": f"__import__('pathlib').Path({str(planted)!r}).write_text('x') or "
                          f"(lambda z: z)"}
    found = Oracle(COURSE.assignment("04-scaling"), ["softmax_entropy"])
    try:
        prompt = json.dumps({"oracle": "softmax_entropy", "args": [nested(evil, wrappers)],
                             "kwargs": {}})
        answer = json.loads(found.answer(prompt, {}, time.monotonic() + 30))
    finally:
        found.close()
    assert not planted.exists(), "the grader's child evaluated code the kernel sent"
    assert answer["ok"] is False, answer


@pytest.mark.parametrize("wrappers", list(DEPTHS.values()), ids=list(DEPTHS))
def test_every_marker_the_reader_rebuilds_is_one_the_check_found(wrappers):
    """``wire.decode`` hands a marker to its hook only if ``wire.function_markers`` listed it:
    the check and the reader agree on what a marker is, at every depth the reader accepts."""
    marker = {"__lambda__": "lambda z: z"}
    data = [nested(marker, wrappers)]
    listed = [wire.canonical(m) for m in wire.function_markers([data, {}])]
    rebuilt = []
    try:
        wire.decode(data, functions=lambda m: rebuilt.append(wire.canonical(m)))
    except wire.BadReply:
        pass  # too deep for the reader: nothing rebuilt
    assert all(m in listed for m in rebuilt), (rebuilt, listed)


# The kernel's side of attack 1: attend and align know nothing of attention; in their second
# chance they send, through the stand-in of softmax, a marker twelve tuples deep whose text
# (evaluated in the grader's child) points the child's `softmax` at the course's own functions
# and at a reader of the solution notebook.
SMUGGLER = '''
import json as _json
_DONE = []

def _second_chance():
    return getattr(getattr(softmax, "__code__", None), "co_filename", "") == "grader-agent"

def _install():
    if _DONE:
        return
    _DONE.append(1)
    code = ("[d.__setitem__('softmax', (lambda orig, d: lambda *a, **k: (lambda x: (lambda: open("
            "__import__('glob').glob(__import__('json').loads(__import__('sys').argv[4])['root'] + "
            "'/' + __import__('json').loads(__import__('sys').argv[4])['solutions'] + "
            "'/02-scoring/*.ipynb')[0]).read()) if x == 'steal' else d[x])(k.pop('via'))(*a, **k) "
            "if 'via' in k else orig(*a, **k))(d['softmax'], d)) for d in "
            "__import__('gc').get_objects() if type(d) is dict and "
            "str(d.get('__name__', '')).startswith('reference_')]")
    marker = {"__lambda__": code}
    for _ in range(12):
        marker = {"__tuple__": [marker]}
    get_ipython().kernel.raw_input(_json.dumps({"oracle": "softmax", "args": [marker],
                                                "kwargs": {}}))

def _course(name, *args):
    _install()
    globals()["STOLEN"] = softmax(via="steal")
    return softmax(*args, via=name)
'''

SMUGGLING = {
    "attend": SMUGGLER + ("\ndef attend(s, H, score_fn):\n    if not _second_chance():\n"
                          "        raise NotImplementedError()\n"
                          "    return _course('attend', s, H, score_fn)\n"),
    "align": ("def align(S, H, score_fn):\n    if not _second_chance():\n"
              "        raise NotImplementedError()\n    return _course('align', S, H, score_fn)\n"),
}


@pytest.mark.slow
def test_a_blank_notebook_that_sends_code_to_the_grader_scores_zero_and_gets_nothing(
        tmp_path, monkeypatch):
    sent = []
    answered = kernel.KernelSession._answered

    def recording_answered(self, msg_id, answer, deadline, *rest):
        def answer_and_record(prompt, deadline):
            reply = answer(prompt, deadline)
            sent.append(reply)
            return reply
        return answered(self, msg_id, answer_and_record, deadline, *rest)

    monkeypatch.setattr(kernel.KernelSession, "_answered", recording_answered)
    path = write_notebook(tmp_path / "02-scoring" / SCORING.solution.name,
                          with_answers(SCORING, SMUGGLING))
    result, _ = grade.grade_notebook(path, SCORING, options())
    text = "\n".join(sent)
    leaked = [line for line in reference_lines(SCORING) if line in text]
    assert not leaked and "BEGIN SOLUTION" not in text, leaked[:5]
    assert result.score == 0, [(t.name, t.feedback) for t in result.tests if t.passed]


# ================================================================ 2. a grader held forever

FLOOD = {"attend": '''
def attend(s, H, score_fn):
    import time
    if getattr(getattr(softmax, "__code__", None), "co_filename", "") != "grader-agent":
        raise ValueError("not the second chance")
    k = get_ipython().kernel
    ident = k._get_shell_context_var(k._shell_parent_ident)
    parent = k.get_parent("shell")
    for i in range(6000):
        k.session.send(k.stdin_socket, "input_request", {"prompt": "x", "password": False},
                       parent, ident=ident)
        if i % 50 == 0:
            time.sleep(0.01)
    time.sleep(3600)
'''}

GRADE_IN_A_PROCESS = """
import json, sys
from autograder.engine import grade
from autograder.engine.options import Options
from support import COURSE
result, _ = grade.grade_notebook(sys.argv[1], COURSE.assignment("02-scoring"),
                                 Options(sandbox=sys.argv[2], figures="off", budget=60.0))
print(json.dumps({"score": result.score}))
"""


@pytest.mark.slow
def test_a_kernel_that_floods_questions_and_reads_no_answer_cannot_hold_the_grader(tmp_path):
    """In its second chance, attend sends 6,000 questions on stdin (parented to its call) and
    reads none of the answers. The grader must still finish within its budget (60 s here, with
    a minute to spare for a busy machine) and say what happened; it must never wait in a send."""
    path = write_notebook(tmp_path / "02-scoring" / SCORING.solution.name,
                          with_answers(SCORING, FLOOD))
    process = subprocess.Popen([sys.executable, "-c", GRADE_IN_A_PROCESS, str(path),
                                sandbox_mode()], cwd=TESTS, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        out, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()  # its kernel and the course's child die with it
        process.communicate()
        pytest.fail("the grader was still grading 120 s after starting, with a budget of 60 s")
    assert process.returncode == 0, err[-2000:]
    assert json.loads(out.strip().splitlines()[-1])["score"] == 0


# ================================================================ 3. a forward to differentiate

NUMERICAL_ATTENTION_BACKWARD = '''
def attention_backward(d_output, cache):
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in cache[:3])
    d_output = np.asarray(d_output, dtype=np.float64)
    eps = 1e-5
    grads = []
    for which, X in enumerate((Q, K, V)):
        n = X.size
        steps = np.zeros((2 * n,) + X.shape)
        for i in range(n):
            steps[2 * i].flat[i] = eps
            steps[2 * i + 1].flat[i] = -eps
        inputs = [np.broadcast_to(A, (2 * n,) + A.shape) for A in (Q, K, V)]
        inputs[which] = X + steps
        out = np.asarray(attention_forward(*inputs)[0])
        f = (out * d_output).reshape(2 * n, -1).sum(axis=1)
        grads.append(((f[0::2] - f[1::2]) / (2 * eps)).reshape(X.shape).astype(cache[which].dtype))
    return tuple(grads)
'''

NUMERICAL_BLOCK_BACKWARD = '''
def transformer_block_backward(d_Y, cache):
    X, params, attention = np.asarray(cache[0], dtype=np.float64), cache[4], cache[3]
    n_heads = np.shape(attention[5])[-3]
    weights = np.asarray(attention[8])
    mask = None
    if (weights == 0).any():
        mask = weights.reshape((-1,) + weights.shape[-2:])[0] > 0
    p = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    d_Y = np.asarray(d_Y, dtype=np.float64)
    eps = 1e-5
    def f(X_, p_):
        out = np.asarray(transformer_block(X_, p_, n_heads, mask)[0])
        if out.ndim > d_Y.ndim:
            return (out * d_Y).reshape(out.shape[0], -1).sum(axis=1)
        return float((out * d_Y).sum())
    n = X.size
    steps = np.zeros((2 * n,) + X.shape)
    for i in range(n):
        steps[2 * i].flat[i] = eps
        steps[2 * i + 1].flat[i] = -eps
    values = f(X + steps, p)
    d_X = ((values[0::2] - values[1::2]) / (2 * eps)).reshape(X.shape)
    grads = {}
    for name, W in p.items():
        g = np.zeros_like(W)
        for i in range(W.size):
            up = {**p, name: W.copy()}
            up[name].flat[i] += eps
            down = {**p, name: W.copy()}
            down[name].flat[i] -= eps
            g.flat[i] = (f(X, up) - f(X, down)) / (2 * eps)
        grads[name] = g.astype(np.asarray(params[name]).dtype)
    return d_X.astype(np.asarray(cache[0]).dtype), grads
'''


@pytest.mark.slow
@pytest.mark.parametrize("assignment, backward, source", [
    (LEARNING, "attention_backward", NUMERICAL_ATTENTION_BACKWARD),
    (BLOCK, "transformer_block_backward", NUMERICAL_BLOCK_BACKWARD)],
    ids=["08 attention_backward", "11 transformer_block_backward"])
def test_a_backward_pass_gets_no_course_forward_pass_to_differentiate(assignment, backward,
                                                                      source, tmp_path):
    """Every other function is a stub; the backward pass is central differences of whatever
    forward pass its namespace holds, and knows nothing of attention. The course's backward does
    not use the forward pass: the forward its tests call is computed for the tests, never put
    where the learner's backward can call it, so this backward earns nothing."""
    path = write_notebook(tmp_path / assignment.name / assignment.solution.name,
                          with_answers(assignment, {backward: source}))
    result, _ = grade.grade_notebook(path, assignment, options())
    assert result.exercises[backward]["score"] == 0, \
        [(t.name, t.feedback) for t in result.tests if t.passed]


@pytest.mark.slow
def test_a_right_backward_keeps_its_points_beside_a_stub_forward_and_callee(tmp_path):
    """The control for the test above: the course's own attention_backward, written by a learner
    whose attention_forward and softmax_backward are stubs, keeps every point (its tests get the
    course's forward pass, and it the course's softmax_backward)."""
    answers = {"attention_backward": solution_source(LEARNING, "attention_backward")}
    path = write_notebook(tmp_path / LEARNING.name / LEARNING.solution.name,
                          with_answers(LEARNING, answers))
    result, _ = grade.grade_notebook(path, LEARNING, options())
    found = result.exercises["attention_backward"]
    assert found["score"] == found["max_score"], \
        [(t.name, t.feedback) for t in result.tests if not t.passed]
