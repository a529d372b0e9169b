"""`make bench`: measurements, side by side in one run, reported as medians and ratios.

1. The instructor's path on a class of *distinct* submissions of every assignment of the course
   (every notebook carries a comment of its own, so no grader can grade two of them once), one
   row per assignment and the class in all: stock ``nbgrader autograde`` (its own Execute step,
   visible checks only, one notebook at a time) against this grader (sandboxed kernels, hidden
   suites, ``--jobs`` in parallel) with its recording of the grades in the gradebook (one nbgrader
   process beside the grading, fed each result as it is known). Stock grades one assignment a
   command; this grader grades them all in one command (one pool of workers, one recording
   process), and each assignment's row holds its share of that command's seconds, in proportion
   to the seconds the workers spent on its submissions. When the class holds identical
   submissions (from 5 learners per assignment on), it is graded again by this
   grader alone: what its content cache gains is its own line.
2. Per submission, the median of each stage: sandbox and kernel start, the notebook's cells, the
   hidden suite, kernel shutdown; the recording process's CPU time, its start and what it added
   after the last grade.
3. Single-submission latency: one submission graded alone (``python -m autograder grade NOTEBOOK``
   end to end, and ``grade_notebook`` in-process) against the same notebook run from a fresh
   kernel (nbclient), medians of a few repeats; beside them, the grading with every cell run
   (``--demonstrations run``): what skipping the demonstration cells gains.
4. Capacity: 10 and 40 (``--capacity``) distinct submissions of the two lightest assignments with ``--jobs 1``
   and ``--jobs 2``: submissions per minute, peak memory per worker, a projection for a class of
   1000 and for a 32-core server.
5. Goals beside the measurements, PASS or MISS.
6. Each solution notebook's run time from a fresh kernel against its budget (15 s; 20 s for 10,
   30 s for 11, 60 s for 12), and the attention kernels.

With the defaults (5 submissions per assignment, 2 latency repeats, capacity at 10 and 40), the
whole run takes about a quarter of an hour on a 2-core machine (benchmarks/README.md).
``--assignments``, ``--per-assignment`` and ``--only`` choose a smaller run, ``--capacity
10,40,80`` a longer curve.

Machines are shared and noisy: read the ratios of runs made minutes apart in this one process.

The sections live in their own modules: :mod:`.synthetic` (the class), :mod:`.comparison`
(1, 2), :mod:`.one_submission` (3), :mod:`.capacity_curve` (4), :mod:`.notebooks` (6);
:mod:`.arithmetic` and :mod:`.tables` turn the measurements into verdicts and tables,
:mod:`.measuring` holds the timers and the memory sampler, :mod:`.cli` the command line.
"""
from .synthetic import (  # noqa: F401
    LIGHT_ASSIGNMENTS, NOTEBOOK_BUDGET, NOTEBOOK_BUDGETS, select, selected, course, assignments,
    light_assignments, notebook_budget, make_distinct, class_notebooks, synthetic_class,
    distinct_count)
from .arithmetic import (  # noqa: F401
    STAGES, STAGE_NAMES, GOALS, CLASS_SIZE, parse_sizes, per_submission, worker_shares,
    stage_medians,
    markdown_table, verdict, projection, class_recording, writer_per_learner,
    building_per_notebook, recording_per_notebook, server_minutes, server_projection,
    read_records)
from .measuring import (  # noqa: F401
    timed, recording_costs, subtree_rss, MemorySampler, notebook_run)
from .comparison import (  # noqa: F401
    instructor_path, recording_alone, stock_path, recording_start, compare, has_identical,
    cost_beyond_cells)
from .one_submission import (  # noqa: F401
    latency)
from .capacity_curve import (  # noqa: F401
    capacity)
from .notebooks import (  # noqa: F401
    font_list_gain, attention_kernels, notebook_times)
from .tables import (  # noqa: F401
    comparison_table, speed_up, assignment_table, duplicates_line, stage_table, latency_table,
    capacity_table, goal_table)
from .cli import (  # noqa: F401
    main)
