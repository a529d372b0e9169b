"""The benchmark's own logic: tables from synthetic numbers, and distinct submissions that differ
in bytes but not in score. No timing is asserted here; `make bench` measures."""
import json

import pytest

from autograder.engine import grade
from autograder.tools import bench, demo
from autograder.engine.options import Options
from support import COURSE, sandbox_mode


def records(*submissions):
    """Stage records as grade.py writes them, the two pids' records interleaved."""
    out = []
    for pid, stages in submissions:
        out += [{"stage": s, "seconds": v, "pid": pid} for s, v in stages.items()]
    return out


def cells(table):
    """A markdown table's body rows, first column -> the other cells, stripped."""
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[2:]]
    return {row[0]: row[1:] for row in rows}


def test_stage_records_become_submissions_and_medians():
    a = {"start": 1.0, "execute": 2.0, "suite": 3.0, "close": 0.5, "total": 7.0}
    b = {"start": 3.0, "execute": 4.0, "suite": 1.0, "close": 0.5, "total": 9.0}
    c = {"start": 2.0, "execute": 3.0, "suite": 2.0, "close": 0.5, "total": 8.0}
    interleaved = records((11, a), (12, b))
    interleaved = [interleaved[0], interleaved[5], *interleaved[1:5], *interleaved[6:]]
    subs = bench.per_submission(interleaved + records((11, c)))
    assert len(subs) == 3
    assert [s["total"] for s in subs] == [7.0, 9.0, 8.0]
    assert subs[0]["other"] == pytest.approx(0.5)
    assert subs[1]["other"] == pytest.approx(0.5)
    medians = bench.stage_medians(subs)
    assert medians["start"] == (2.0, 3)
    assert medians["suite"] == (2.0, 3)
    assert medians["total"] == (8.0, 3)
    # a submission whose kernel never started has no start/execute records, only suite and total
    only = bench.per_submission([{"stage": "suite", "seconds": 1.0, "pid": 1},
                                 {"stage": "total", "seconds": 1.5, "pid": 1}])
    assert only == [{"suite": 1.0, "total": 1.5, "other": 0.5}]


def test_tables_goals_and_projection_from_synthetic_numbers():
    assert bench.parse_sizes("10,40,160") == [10, 40, 160]
    assert bench.parse_sizes(" 8 , 16 ") == [8, 16]
    for bad in ("", "0", "10,-4", "x"):
        with pytest.raises(ValueError):
            bench.parse_sizes(bad)
    assert bench.verdict(0.1, 0.2) == "PASS" and bench.verdict(0.3, 0.2) == "MISS"
    assert bench.verdict(3.0, 2.5, at_least=True) == "PASS"
    assert bench.verdict(2.0, 2.5, at_least=True) == "MISS"
    assert bench.verdict(None, 1.0) == "n/a"
    p = bench.projection(per_minute=20.0, recording_per_submission=0.6, learners=1000)
    assert p == {"grading": 50.0, "recording": 10.0, "total": 60.0}
    rows = [{"size": 40, "jobs": 1, "per_minute": 30.0, "worker_mib": 200.0},
            {"size": 160, "jobs": 1, "per_minute": 20.0, "worker_mib": 256.0},
            {"size": 160, "jobs": 2, "per_minute": 35.0, "worker_mib": 250.0}]
    line = bench.server_projection(rows, recording=0.12)
    # 160 with --jobs 1: 3 s per submission; 1000 of them over 32 cores = 93.75 s = 1.6 min; the
    # one writer records 1000 x 0.12 s = 2 min beside it, so the class takes 2 min
    assert "3.00 s per submission per core" in line and "1.6 min of grading" in line
    assert "needs 2.0 min" in line and "takes 2.0 min" in line
    assert "8 GiB" in line and "256 MiB each" in line
    assert bench.server_minutes(rows, 0.05)["total"] == pytest.approx(93.75 / 60)
    assert bench.server_projection([r for r in rows if r["jobs"] == 2], 0.1) == ""

    table = bench.markdown_table(["name", "value"], [["a", "1.0"], ["longer name", "22.5"]])
    lines = table.splitlines()
    assert lines[0] == "| name        | value |"
    assert lines[1] == "|-------------|-------|"
    assert lines[2] == "| a           |   1.0 |"
    assert len({len(line) for line in lines}) == 1

    c = {"count": 10, "stock": 100.0, "grading": 20.0, "recording": 5.0, "full": 25.0, "waited": 1.0,
         "beside": 6.0,
         "duplicates": 12.5, "duplicates_distinct": 4, "recording_fixed": 1.0, "passes": 2, "ours_distinct": 10,
         "submissions": [{"start": 1.0, "execute": 2.0, "suite": 1.0, "close": 0.0,
                          "other": 0.0, "total": 4.0}] * 10,
         "each": {"00-getting-started": {"count": 5, "stock": 30.0, "full": 5.0},
                  "02-scoring": {"count": 5, "stock": 70.0, "full": 20.0}}, "cost": 2.0}
    assert bench.cost_beyond_cells(c["submissions"]) == 2.0
    # one command's seconds divided by the workers' seconds on each assignment's submissions
    records = [{"stage": "total", "seconds": 3.0, "pid": 1, "assignment": "a"},
               {"stage": "execute", "seconds": 9.0, "pid": 1},
               {"stage": "total", "seconds": 1.0, "pid": 2, "assignment": "b"},
               {"stage": "total", "seconds": 4.0, "pid": 2, "assignment": "a"}]
    assert bench.worker_shares(records) == {"a": 0.875, "b": 0.125}
    assert bench.worker_shares([]) == {}
    per = cells(bench.assignment_table(c))
    assert per["00-getting-started"] == ["5", "30.0", "5.0", "6.00x", "PASS"]
    assert per["02-scoring"] == ["5", "70.0", "20.0", "3.50x", "PASS"]
    assert per["the class in all"] == ["10", "100.0", "25.0", "4.00x", "PASS"]
    comparison = bench.comparison_table(c)
    assert cells(comparison)["stock nbgrader autograde (distinct submissions)"] == [
        "100.0", "6.0", "1.00x"]
    assert "4.00x" in comparison and "5.00x" in comparison and "1.00x" in comparison
    assert "2.00x from the content cache" in bench.duplicates_line(c)
    stages = bench.stage_table(c, 10.0)
    rows = cells(stages)
    assert rows["recording, replayed alone (wall, per submission)"] == ["0.50", "12%", "10"]
    assert rows["recording beside the grading (CPU of its process, per submission)"] == [
        "0.60", "15%", "10"]
    assert rows["recording after the last grade (wall, per submission)"] == ["0.10", "2%", "10"]
    assert rows[bench.STAGE_NAMES["execute"]] == ["2.00", "50%", "10"]
    # two recording processes of 1 s before any notebook: (5 - 2) / 10 s per notebook
    assert rows["of which its start (wall, one process per command)"] == ["1.00", "", "2"]
    assert rows["of which per notebook, after the start"] == ["0.30", "8%", "10"]
    # a class of 1000 has one recording process: its start once, then 0.3 s per notebook
    assert bench.class_recording(c, 1000) == pytest.approx((1.0 + 1000 * 0.3) / 1000)
    assert bench.class_recording(dict(c, recording_fixed=None)) == pytest.approx(0.5)
    assert bench.class_recording(None) is None
    # the one writer's share: its start once, then the rows it measured (0.05 s per notebook);
    # the building workers' CPU (0.2 s per notebook) goes to the cores, with the grading
    assert bench.writer_per_learner(c, 1000) == pytest.approx((1.0 + 1000 * 0.3) / 1000)
    split = dict(c, written=0.5, built=2.0)
    assert bench.writer_per_learner(split, 1000) == pytest.approx((1.0 + 1000 * 0.05) / 1000)
    assert bench.building_per_notebook(split) == pytest.approx(0.2)
    assert bench.building_per_notebook(c) == 0.0
    assert cells(bench.stage_table(split, 10.0))[
        "the one writer's rows (its own seconds, per notebook)"] == ["0.05", "1%", "10"]
    # 3 s of grading and 0.2 s of building per submission: 1000 over 32 cores = 100 s
    single = [{"size": 160, "jobs": 1, "per_minute": 20.0, "worker_mib": 256.0}]
    assert bench.server_minutes(single, 0.05, building=0.2)["grading"] == pytest.approx(100 / 60)
    assert "0.20 s of building" in bench.server_projection(single, 0.05, building=0.2)
    assert rows["stock nbgrader autograde, per submission"] == ["10.00", "250%", "10"]
    lat = {"00-getting-started": {"notebook": 2.0, "command": 4.0, "in-process": 3.0,
                                  "every cell": 4.5, "stages": {"start": (0.8, 3)}}}
    assert cells(bench.latency_table(lat))["00-getting-started"] == [
        "2.00", "4.00", "3.00", "0.80", "+2.00", "+1.00", "4.50", "1.50x"]
    cap = [{"size": 10, "jobs": 1, "seconds": 60.0, "per_minute": 10.0, "worker_mib": 150.0,
            "tree_mib": 150.0, "same_scores": True}]
    assert cells(bench.capacity_table(cap))["10"] == ["1", "60.0", "10.0", "150", "150", "yes"]
    goals = cells(bench.goal_table(c, lat, cap))
    verdicts = {goal: row[-1] for goal, row in goals.items()}
    assert verdicts.pop("instructor path (grade + recording) vs stock, 00-getting-started") == "PASS"
    assert verdicts.pop("instructor path (grade + recording) vs stock, 02-scoring") == "PASS"
    assert verdicts.pop("instructor path (grade + recording) vs stock, the class in all") == "PASS"
    # 4 s in all, of which 2 s of the notebook's own cells: 2 s beyond them, more than 1 s
    assert verdicts.pop("median grading cost per submission beyond the notebook's own cells") \
        == "MISS"
    assert verdicts.pop("recording cost per submission (replayed alone, wall)") == "MISS"
    # 6 s per submission on one core: 3.1 min over 32 cores; recording: one start of 1 s, then
    # 0.3 s per notebook (not the replayed 0.5 s, which pays a start for every 5): 5.0 min
    assert goals["1000 learners on a 32-core server, recording included"][0] == "5.0 min"
    assert verdicts.pop("1000 learners on a 32-core server, recording included") == "MISS"
    assert verdicts.pop("latency 00-getting-started (command) = notebook 2.00 s + X") == "MISS"
    assert verdicts.pop("latency 00-getting-started (in-process) = notebook 2.00 s + X") == "PASS"
    assert goals.pop("peak memory per worker (grader + its kernel, RSS)")[0] == "150 MiB"
    assert verdicts == {"peak memory per worker (grader + its kernel, RSS)": "-"}
    assert "none in this class" in bench.duplicates_line({**c, "duplicates": None})
    assert bench.notebook_budget("11-transformer-block") == 30 and \
        bench.notebook_budget("02-scoring") == 15


def test_every_bench_submission_is_distinct(monkeypatch):
    monkeypatch.setattr(bench.synthetic, "_selected", list(bench.LIGHT_ASSIGNMENTS))
    made = bench.class_notebooks(8, distinct=True)
    texts = [json.dumps(notebook) for _, _, notebook in made]
    assert len(set(texts)) == len(texts) == 8 * len(bench.assignments())
    plain = bench.class_notebooks(8, distinct=False)
    assert len({json.dumps(n) for _, _, n in plain}) < len(plain)  # the demo's mix repeats
    # from the 5th learner on: a second reference answer
    for size, identical in ((4, False), (5, True)):
        plain = bench.class_notebooks(size, distinct=False)
        assert (len({json.dumps(n) for _, _, n in plain}) < len(plain)) is identical
        assert bench.has_identical(size) is identical


@pytest.mark.slow
def test_distinct_submissions_grade_to_the_expected_scores(tmp_path):
    assignment = "00-getting-started"
    plans = demo.sample_class(2)  # learner01: reference answer, learner02: a catalogued mistake
    expected = demo.expected_scores(plans)
    made = [m for m in bench.class_notebooks(2, distinct=True) if m[1] == assignment]
    assert [m[0] for m in made] == ["learner01", "learner02"]
    paths, results = [], []
    for learner, _, notebook in made:
        path = tmp_path / learner / assignment / "notebook.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(notebook))
        paths.append(path)
        original = demo.answer_notebook(COURSE.assignment(assignment), plans[learner][assignment])
        assert json.dumps(notebook) != json.dumps(original)
        result, _ = grade.grade_notebook(path, COURSE.assignment(assignment),
                                         Options(sandbox=sandbox_mode()))
        results.append(result)
        assert result.score == pytest.approx(expected[learner][assignment]), \
            result.errors
        assert not result.flags
    assert list(results[0].errors) == []  # the comment breaks nothing in the answer
    assert paths[0].read_bytes() != paths[1].read_bytes()
    assert results[0].score == results[0].max_score > results[1].score


def test_the_instructor_path_measures_its_recording(tmp_path, monkeypatch):
    """The bench's hooks into the course still see the recording: its CPU time, its start and
    what it added after the last grade; and each assignment's time."""
    monkeypatch.setattr(bench.synthetic, "_selected", list(bench.LIGHT_ASSIGNMENTS))
    run = bench.instructor_path(tmp_path, 1, 2)
    assert set(run["each"]) == set(bench.LIGHT_ASSIGNMENTS)
    # one command for both: its seconds shared in proportion to the workers' seconds on each
    assert sum(run["each"].values()) == pytest.approx(run["seconds"])
    assert all(seconds > 0 for seconds in run["each"].values())
    assert run["count"] == 2 and len(run["submissions"]) == 2
    assert 0 < run["beside"] < run["seconds"]
    assert 0 <= run["waited"] < run["seconds"]
    alone = bench.recording_alone(run["state"])
    assert alone["cpu"] > 0 and alone["seconds"] > 0  # a replay, timed: no order between walls
    assert len(list((run["state"] / "recorded").rglob("*.json"))) == 2
    starts = bench.recording_start(tmp_path, repeats=2)
    assert len(starts) == 2 and all(s > 0 for s in starts)
