"""The wire: the grader reads what a kernel sends as data, and nothing else."""
import ast
import base64
import builtins
import contextlib
import io
import json
import pickle

import numpy as np
import pytest

from autograder.engine import agent, suite, wire

NONCE = "n0nce"


def reply(value, **extra):
    return json.dumps({"ok": True, "nonce": NONCE, "value": value, "mutated": [], "warnings": [],
                       "stdout": "", "seconds": 0.1, **extra})


def npy(array):
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode()


@contextlib.contextmanager
def nothing_runs():
    """Evaluating, executing, unpickling or importing anything fails loudly inside the block."""
    def refuse(*args, **kwargs):
        raise AssertionError("the trusted side tried to run something the kernel sent")
    saved = {name: getattr(builtins, name) for name in ("eval", "exec", "compile", "__import__")}
    saved_loads, saved_load = pickle.loads, np.load
    try:
        for name in saved:
            setattr(builtins, name, refuse)
        pickle.loads, np.load = refuse, refuse
        yield
    finally:
        for name, value in saved.items():
            setattr(builtins, name, value)
        pickle.loads, np.load = saved_loads, saved_load


HOSTILE = [
    {"__lambda__": "__import__('os').system('touch /tmp/x')"},
    {"__partial__": {"__lambda__": "print"}, "kwargs": {"__dict__": {}}},
    {"__function__": "row_normalize"},
    {"__rng__": 3},
    {"__ndarray__": base64.b64encode(pickle.dumps(np.arange(3))).decode()},
    {"__ndarray__": "%%% not base64"},
    {"__float__": "__import__('os')"},
    {"__tuple__": [{"__lambda__": "x"}]},
    {"__dict__": {"a": {"__lambda__": "x"}}},
    {"__ndarray__": npy(np.arange(3)), "__lambda__": "x"},
    {"__unknown__": 1},
]


@pytest.mark.parametrize("value", HOSTILE, ids=[str(i) for i in range(len(HOSTILE))])
def test_hostile_values_become_data_or_unsupported(value):
    with nothing_runs():
        decoded = wire.read_reply(reply(value), NONCE)["value"]

    def plain(x):
        if isinstance(x, (list, tuple)):
            return all(plain(v) for v in x)
        if isinstance(x, dict):
            return all(isinstance(k, str) and plain(v) for k, v in x.items())
        return x is None or isinstance(x, (bool, int, float, str, np.ndarray, np.generic,
                                           wire.Unsupported))
    assert plain(decoded)
    assert not callable(decoded) and not isinstance(decoded, np.random.Generator)


@pytest.mark.parametrize("array", [np.arange(6.0).reshape(2, 3), np.ones((2, 2), bool),
                                   np.float32([1, 2]), np.int8([-1, 5]), np.zeros((0, 3)),
                                   np.asfortranarray(np.arange(6).reshape(2, 3)),
                                   np.array([1 + 2j]), np.arange(4).astype(">i4"),
                                   np.array(2.5)])
def test_numeric_arrays_round_trip_through_the_strict_reader(array):
    text = npy(array)
    with nothing_runs():
        decoded = wire.read_array(text)
    assert isinstance(decoded, np.ndarray) and decoded.flags.writeable
    assert decoded.dtype == array.dtype.newbyteorder("=") and decoded.shape == array.shape
    assert np.array_equal(decoded, array)


@pytest.mark.parametrize("array", [np.array(["a", "b"]), np.zeros(2, dtype=[("x", "f8")]),
                                   np.zeros(2, dtype="M8[s]"), np.zeros(2, dtype="V4"),
                                   np.zeros(2, dtype=np.longdouble)])
def test_other_dtypes_are_refused(array):
    text = npy(array)
    with nothing_runs():
        decoded = wire.read_array(text)
    assert isinstance(decoded, wire.Unsupported)


def test_a_header_that_lies_about_the_size_is_refused():
    raw = bytearray(base64.b64decode(npy(np.arange(4.0))))
    assert isinstance(wire.read_array(base64.b64encode(bytes(raw[:-8])).decode()), wire.Unsupported)
    tampered = bytes(raw).replace(b"(4,)", b"(9,)")
    assert isinstance(wire.read_array(base64.b64encode(tampered).decode()), wire.Unsupported)


def test_a_reply_must_carry_this_calls_nonce():
    with pytest.raises(wire.BadReply, match="does not answer this call"):
        wire.read_reply(reply(1), "another")
    with pytest.raises(wire.BadReply):
        wire.read_reply(json.dumps({"ok": True, "value": 1}), NONCE)


def test_limits_on_size_depth_and_parts():
    with pytest.raises(wire.BadReply, match="larger than"):
        wire.read_reply(" " * (wire.MAX_REPLY_CHARS + 1), NONCE)
    deep = 1
    for _ in range(wire.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(wire.BadReply, match="nested"):
        wire.read_reply(reply(deep), NONCE)
    with pytest.raises(wire.BadReply, match="parts"):
        wire.read_reply(reply(list(range(wire.MAX_ITEMS + 1))), NONCE)
    with pytest.raises(wire.BadReply, match="not valid JSON"):
        wire.read_reply("[" * 100_000, NONCE)


def test_reply_fields_are_checked_one_by_one():
    text = json.dumps({"ok": "yes", "nonce": NONCE, "value": 1})
    assert wire.read_reply(text, NONCE)["ok"] is False  # only the JSON value true means ok
    odd = wire.read_reply(reply(1, mutated=["0", 2, -1, True], warnings=[3, "w"], stdout=7,
                                seconds="x"), NONCE)
    assert odd["mutated"] == [2] and odd["warnings"] == ["", "w"]
    assert odd["stdout"] == "" and odd["seconds"] == 0.0
    failed = wire.read_reply(json.dumps({"ok": False, "nonce": NONCE, "error": "boom"}), NONCE)
    assert failed["error"]["kind"] == "exception" and failed["error"]["message"] == "an error"


def test_the_trusted_wire_module_has_no_way_to_run_code():
    """No eval, exec, compile, import, pickle or np.load anywhere in autograder/engine/wire.py."""
    tree = ast.parse(open(wire.__file__).read())
    calls = [node.func for node in ast.walk(tree) if isinstance(node, ast.Call)]
    names = {f.id for f in calls if isinstance(f, ast.Name)}
    methods = {(f.value.id, f.attr) for f in calls
               if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)}
    assert not names & {"eval", "exec", "compile", "__import__", "getattr", "open"}
    assert not methods & {("np", "load"), ("numpy", "load"), ("importlib", "import_module")}
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    assert not imported & {"pickle", "marshal", "importlib"}


def test_the_agent_and_the_grader_agree_on_the_reply_type():
    assert agent.MIME == wire.MIME


def test_the_local_caller_uses_the_same_data_only_reader():
    """A trusted namespace called in-process comes back exactly as from a kernel."""
    namespace = {"f": lambda x: (x * 2, {"n": 3}, [None, "s"], np.float32(1.5))}
    call = suite.local_caller(namespace)
    value = call("f", (np.arange(3),), {})["value"]
    assert isinstance(value, tuple) and np.array_equal(value[0], [0, 2, 4])
    assert value[1] == {"n": 3} and value[2] == [None, "s"] and value[3] == np.float32(1.5)
    namespace["g"] = lambda: object()
    assert isinstance(call("g", (), {})["value"], wire.Unsupported)


@pytest.mark.slow
def test_json_from_a_kernel_is_counted_before_it_is_parsed():
    """``[{},{},...]`` makes a 64-byte object of every 3 bytes: refused before any is made."""
    bomb = "[" + "{}," * (wire.MAX_STRUCTURE + 1) + "{}]"
    with pytest.raises(ValueError, match="values"):
        wire.loads(bomb)
    with pytest.raises(ValueError, match="values"):
        wire.loads(bomb.encode())
    assert wire.loads('{"text": "a, b, c"}') == {"text": "a, b, c"}
