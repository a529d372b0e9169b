"""A class on JupyterHub, set up by running docs/jupyterhub.md, taught through the hub's REST API.

Every tagged code block of docs/jupyterhub.md runs in order: ```` ```sh root ```` blocks as root,
```` ```sh instructor ```` blocks as the instructor, ```` ```python file=PATH ```` blocks are written
to PATH. The doc's absolute paths (/opt, /srv, /etc) are moved into a temporary folder and its
account names (instructor, alice, bob) get a unique prefix; nothing else changes, except what this
test appends to the hub's configuration (a service token to drive the REST API, and the moved
/etc/jupyter on the servers' configuration path).

Then a class: the doc's roster is the formgrader's list of students before anyone hands anything
in; the instructor generates and releases from the formgrader's API; alice fetches and submits in
Chromium, then submits again through her server's API; bob, whose answer is a catalogued mistake
and who tries to read what learners must not, fetches and submits through the API; the instructor
collects, autogrades each submission with the formgrader's own action, grades the written answers
by hand through the API the formgrader's Manual Grading page uses, generates and releases
feedback; both fetch their feedback, which shows the grader's comment; the doc's command-line
grading gives the same grades, hand-given points included, in the export. alice's lab opens the
released notebook unmodified on the course's kernel, and shows her figures with their descriptions. Learners can read
neither the course, the gradebook nor each other's work, from their servers or from code being
graded. Every server started is stopped by its process id and every account is removed.
"""
import contextlib
import csv
import json
import os
import re
import secrets
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from autograder.engine import catalogue, grade
from support import COURSE, REPO, accounts_lock, needs_root_and_users, run_as

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("users")]

DOC = REPO / "docs" / "jupyterhub.md"
ASSIGNMENT = "00-getting-started"
NOTEBOOK = COURSE.assignment(ASSIGNMENT).release.name
COURSE_ID = "attention-course"
BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.M | re.S)


def doc_blocks():
    """(language, tags, text) of every fenced block of the doc, in order."""
    return [(m.group(1), m.group(2).split(), m.group(3)) for m in BLOCK.finditer(DOC.read_text())]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def administrator_path():
    """PATH as a root login has it: without this checkout's environment (first on PATH under
    `make`) or anything in root's home (pyenv). `python3 -m venv` in the doc then builds on the
    system's Python, as on the doc's reader's machine, not on an interpreter inside a folder
    other accounts cannot enter."""
    entries = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(os.pathsep)
    private = (REPO.resolve(), Path.home().resolve())
    return os.pathsep.join(e for e in entries if e and not any(
        Path(e).resolve().is_relative_to(p) for p in private))


class Hub:
    """The doc's deployment moved under ``top``, with prefixed account names."""

    def __init__(self, top, prefix):
        self.top = top
        self.users = {role: f"{prefix}{role}" for role in ("instructor", "alice", "bob")}
        self.passwords = {role: secrets.token_urlsafe(12) for role in self.users}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_hex(32)
        self.process = None
        self.paths = {"/opt/attention-course": top / "opt" / "attention-course",
                      "/srv/nbgrader/exchange": top / "srv" / "nbgrader" / "exchange",
                      "/srv/jupyterhub": top / "srv" / "jupyterhub",
                      "/etc/jupyterhub": top / "etc" / "jupyterhub",
                      "/etc/jupyter": top / "etc" / "jupyter"}
        self.repository = top / "attention-course.git"  # what the instructor clones
        self.env = {"COURSE_SRC": str(REPO), "COURSE_REPOSITORY": str(self.repository),
                    "INSTRUCTOR_PASSWORD": self.passwords["instructor"],
                    "ALICE_PASSWORD": self.passwords["alice"],
                    "BOB_PASSWORD": self.passwords["bob"],
                    "JUPYTER_CONFIG_PATH": str(self.paths["/etc/jupyter"])}

    def home(self, role):
        return Path("/home") / self.users[role]

    def moved(self, text):
        """The doc's text with this deployment's paths, names and port."""
        olds = sorted(self.paths, key=len, reverse=True)
        text = re.sub("|".join(map(re.escape, olds)), lambda m: str(self.paths[m.group(0)]), text)
        for role, user in self.users.items():
            text = re.sub(rf"(?<![\w$-]){role}(?![\w-])", user, text)
        return text.replace("127.0.0.1:8000", f"127.0.0.1:{self.port}")

    def python(self):
        return str(self.paths["/opt/attention-course"] / "env" / "bin" / "python")

    # ------------------------------------------------------------------ running the doc
    def run_block(self, tags, text):
        script = "set -euo pipefail\n" + self.moved(text)
        if "root" in tags:
            env = {**os.environ, **self.env, "PATH": administrator_path()}
            done = subprocess.run(["bash", "-c", script], env=env, capture_output=True,
                                  text=True, timeout=1200, cwd=self.top)
            assert done.returncode == 0, f"{script}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
            return done
        return run_as(self.users["instructor"], self.home("instructor"), "bash", "-c", script,
                      env=self.instructor_env(), timeout=1200)

    def instructor_env(self):
        return {"JUPYTER_CONFIG_PATH": self.env["JUPYTER_CONFIG_PATH"],
                "COURSE_REPOSITORY": str(self.repository),
                "PATH": f"{Path(self.python()).parent}:/usr/local/bin:/usr/bin:/bin"}

    def publish_repository(self):
        """A bare copy of this checkout's commit, owned by the instructor (git refuses to read a
        repository another user owns), standing in for the course's public repository."""
        subprocess.run(["git", "clone", "--quiet", "--bare", str(REPO), str(self.repository)],
                       check=True, capture_output=True)
        user = self.users["instructor"]
        subprocess.run(["chown", "-R", f"{user}:{user}", str(self.repository)], check=True)

    def write_file(self, tag, text):
        target = tag.split("=", 1)[1]
        if target.startswith("~instructor/"):
            path = self.home("instructor") / target.split("/", 1)[1]
        else:
            path = Path(self.moved(target))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.moved(text))
        if path.is_relative_to(self.home("instructor")):
            user = self.users["instructor"]
            subprocess.run(["chown", "-R", f"{user}:{user}", str(path.parent)], check=True)
        return path

    def run_doc(self, phases, after_accounts=None):
        """Run the doc's tagged blocks whose phase (a tag after root/instructor) is in ``phases``
        (None: blocks without a phase)."""
        for language, tags, text in doc_blocks():
            who = [t for t in tags if t in ("root", "instructor")]
            files = [t for t in tags if t.startswith("file=")]
            phase = next((t for t in tags if t not in ("root", "instructor")
                          and not t.startswith("file=")), None)
            if phase not in phases or not (who or files):
                continue
            if files:
                self.write_file(files[0], text)
            elif "useradd" in text and after_accounts is not None:
                with accounts_lock():  # the page's useradd, in its turn among the test processes
                    self.run_block(tags, text)
                after_accounts()
            elif phase == "hub":
                self.start(text)
            else:
                self.run_block(tags, text)

    # ------------------------------------------------------------------ the hub
    def start(self, command):
        config = self.paths["/etc/jupyterhub"] / "jupyterhub_config.py"
        with open(config, "a") as handle:  # what only the test needs
            handle.write(
                "\n# --- added by tests/test_jupyterhub.py\n"
                f"c.JupyterHub.services = [{{'name': 'class-test', 'api_token': {self.token!r}}}]\n"
                "c.JupyterHub.load_roles = [{'name': 'class-test', 'services': ['class-test'], "
                "'scopes': ['admin:users', 'admin:servers', 'access:servers', 'read:users']}]\n"
                f"c.Spawner.environment['JUPYTER_CONFIG_PATH'] = "
                f"{self.env['JUPYTER_CONFIG_PATH']!r}\n"
                "c.Spawner.http_timeout = 120\nc.Spawner.start_timeout = 120\n")
        # The doc's command is `cd FOLDER && HUB ARGS...`: run HUB itself, so its pid is the hub's.
        folder, line = self.moved(command).strip().split("&&", 1)
        log = open(self.top / "hub.log", "w")
        self.process = subprocess.Popen(
            shlex.split(line), cwd=folder.strip().removeprefix("cd ").strip(),
            env={**os.environ, "PATH": f"{Path(self.python()).parent}:/usr/local/bin:/usr/bin:/bin",
                 "JUPYTER_CONFIG_PATH": self.env["JUPYTER_CONFIG_PATH"]},
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.process.poll() is None, (self.top / "hub.log").read_text()[-4000:]
            with contextlib.suppress(OSError, urllib.error.URLError):
                if self.api("GET", "/hub/api/")[0] == 200:
                    return
            time.sleep(0.5)
        raise AssertionError("the hub did not start:\n" + (self.top / "hub.log").read_text()[-4000:])

    def api(self, method, path, data=None, form=None, token=None, raw=False, timeout=300):
        """(status, body) of a request to the hub or a user's server, with the service token."""
        headers = {"Authorization": f"token {token or self.token}"}
        body = None
        if data is not None:
            body = json.dumps(data).encode()
            headers["Content-Type"] = "application/json"
        elif form is not None:
            body = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        request = urllib.request.Request(self.url + path, data=body, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                text = response.read().decode()
                status = response.status
        except urllib.error.HTTPError as error:
            text, status = error.read().decode(errors="replace"), error.code
        if raw:
            return status, text
        try:
            return status, json.loads(text) if text else None
        except json.JSONDecodeError:
            return status, text

    def log_tail(self, size=30000):
        with contextlib.suppress(OSError):
            return (self.top / "hub.log").read_text()[-size:]
        return ""

    def spawn(self, role):
        user = self.users[role]
        status, _ = self.api("POST", f"/hub/api/users/{user}/server")
        assert status in (201, 202, 400), status  # 400: already running
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            _, info = self.api("GET", f"/hub/api/users/{user}")
            server = (info or {}).get("servers", {}).get("", {})
            if server.get("ready"):
                return
            time.sleep(1)
        raise AssertionError(f"{user}'s server did not start:\n"
                             + (self.top / "hub.log").read_text()[-4000:])

    def server(self, role, method, path, **kwargs):
        return self.api(method, f"/user/{self.users[role]}{path}", **kwargs)

    def stop(self):
        """Stop every user's server, then the hub and its proxy, each by its own process id."""
        for user in self.users.values():
            with contextlib.suppress(Exception):
                self.api("DELETE", f"/hub/api/users/{user}/server", timeout=30)
        proxy_pid = self.paths["/srv/jupyterhub"] / "jupyterhub-proxy.pid"
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=30)
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(timeout=10)
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(proxy_pid.read_text()), 15)


@pytest.fixture
def hub():
    needs_root_and_users()
    if shutil.which("configurable-http-proxy") is None:
        if os.environ.get("CI"):
            pytest.fail("configurable-http-proxy is missing in CI: .ci/run must install it")
        pytest.skip("configurable-http-proxy is not installed (npm install -g "
                    "configurable-http-proxy@5.3.0)")
    top = Path(tempfile.mkdtemp(prefix="hub-", dir="/srv" if os.path.isdir("/srv") else None))
    top.chmod(0o755)
    deployment = Hub(top, f"h{os.getpid() % 100000}")
    try:
        yield deployment
    finally:
        deployment.stop()
        for user in deployment.users.values():
            subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)
            with accounts_lock():
                subprocess.run(["userdel", "--remove", user], capture_output=True)
        survivors = [u for u in deployment.users.values()
                     if subprocess.run(["pgrep", "-u", u], capture_output=True).stdout.strip()]
        shutil.rmtree(top, ignore_errors=True)
        assert not survivors, f"processes of {survivors} outlived the test"


SNOOP = """import glob, os
targets = glob.glob('/home/*/attention-course/solutions/*/*.ipynb') + \\
    glob.glob('/home/*/attention-course/suites/*/*.py') + \\
    glob.glob('/home/*/attention-course/.course/gradebook.db') + \\
    glob.glob('{exchange}/**/*.ipynb', recursive=True)
for path in targets:
    try:
        print('LEAK' + 'ED:', path, open(path, 'rb').read()[:80])
    except OSError:
        pass
"""


def bob_notebook(hub):
    mutant = catalogue.mutants(COURSE.assignment(ASSIGNMENT), "row_normalize")[0]
    notebook = catalogue.notebook_with(mutant)
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [],
                              "execution_count": None,
                              "source": SNOOP.format(exchange=hub.paths["/srv/nbgrader/exchange"])})
    return notebook, grade.grade_local(COURSE.assignment(ASSIGNMENT), mutant.namespace()).score


def put_notebook(hub, role, notebook):
    path = f"/api/contents/{ASSIGNMENT}/{NOTEBOOK}"
    status, _ = hub.server(role, "PUT", path, data={"type": "notebook", "format": "json",
                                                    "content": notebook})
    assert status in (200, 201), status


def learner_action(hub, role, action):
    status, reply = hub.server(role, "POST", f"/assignments/{action}",
                               form={"assignment_id": ASSIGNMENT, "course_id": COURSE_ID})
    assert status == 200 and reply.get("success"), (action, status, reply)
    return reply


def formgrader(hub, method, path, **kwargs):
    status, reply = hub.server("instructor", method, f"/formgrader/api{path}", **kwargs)
    if status != 200:
        print(hub.log_tail())
    assert status == 200, (path, status, str(reply)[:300])
    if isinstance(reply, dict) and "success" in reply:
        assert reply["success"], (path, reply)
    return reply


def browser_fetch_and_submit(hub, shots):
    """alice logs in to the hub in Chromium, fetches and submits from the Assignments tab."""
    playwright = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI: .ci/run must install it")
        pytest.skip("Debian's chromium is not installed")
    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=args)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{hub.url}/hub/login")
            page.fill("#username_input", hub.users["alice"])
            page.fill("#password_input", hub.passwords["alice"])
            page.click("#login_submit")
            page.wait_for_url(re.compile(r".*/user/.*/lab.*"), timeout=180_000)
            page.wait_for_selector(".jp-LauncherCard, .jp-DirListing", timeout=180_000)
            page.locator(".lm-MenuBar-item", has_text="Nbgrader").first.click()
            page.locator(".lm-Menu-item", has_text="Assignment List").first.click()
            fetch = page.locator("button:has-text('Fetch')").first
            fetch.wait_for(timeout=120_000)
            fetch.click()
            submit = page.locator("button:has-text('Submit')").first
            submit.wait_for(timeout=120_000)
            page.screenshot(path=str(shots / "hub-assignments.png"))
            submit.click()
            page.wait_for_selector("text=submitted", timeout=120_000)
            opens_on_the_course_kernel(hub, page, shots)
            shows_figures_in_words(hub, page, shots)
        finally:
            browser.close()


def open_notebook(hub, page):
    """alice opens the assignment's notebook in her lab; its tab, once the kernel is idle."""
    page.goto(f"{hub.url}/user/{hub.users['alice']}/lab/tree/{ASSIGNMENT}/{NOTEBOOK}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=180_000)
    page.wait_for_selector(".jp-StatusBar-TextItem:has-text(\"Idle\")", timeout=180_000)
    tab = page.locator(".lm-DockPanel .lm-TabBar-tab.lm-mod-current")
    assert NOTEBOOK in tab.inner_text()
    return tab


def opens_on_the_course_kernel(hub, page, shots):
    """The notebook alice fetched opens unmodified: her server starts the course's kernel (step 3
    of the doc), whose language is the one the notebook records."""
    fetched = hub.home("alice") / ASSIGNMENT / NOTEBOOK
    before = fetched.read_bytes()
    assert json.loads(before)["metadata"]["kernelspec"]["name"] == "python3"
    tab = open_notebook(hub, page)
    page.wait_for_timeout(3000)  # what the kernel's reply changes, it has changed by now
    page.screenshot(path=str(shots / "hub-learner-opens.png"))
    assert "jp-mod-dirty" not in (tab.get_attribute("class") or ""), f"{NOTEBOOK} opened modified"
    status, specs = hub.server("alice", "GET", "/api/kernelspecs")
    assert status == 200 and specs["default"] == "python3", (status, specs)
    assert "--IPKernelApp.kernel_class=helpers.kernel.Kernel" in specs["kernelspecs"]["python3"][
        "spec"]["argv"], specs["kernelspecs"]["python3"]
    status, sessions = hub.server("alice", "GET", "/api/sessions")
    assert [s["kernel"]["name"] for s in sessions if s["path"].endswith(NOTEBOOK)] == ["python3"]
    tab.locator(".lm-TabBar-tabCloseIcon").click()
    page.wait_for_timeout(1000)
    assert page.locator(".jp-Dialog").count() == 0, page.locator(".jp-Dialog").all_inner_texts()
    assert fetched.read_bytes() == before


def shows_figures_in_words(hub, page, shots):
    """alice's answers, run from her lab's Run menu: each figure is an image whose alt text is the
    figure in words."""
    put_notebook(hub, "alice", catalogue.filled_notebook(COURSE.assignment(ASSIGNMENT)))
    open_notebook(hub, page)
    page.locator(".lm-MenuBar-item", has_text="Run").first.click()
    page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()
    figure = page.locator(".jp-OutputArea-output img").first
    figure.wait_for(timeout=180_000)
    figure.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "hub-learner-figure.png"))
    assert figure.evaluate("img => img.naturalWidth") > 100
    assert (figure.get_attribute("alt") or "").startswith("Figure"), figure.get_attribute("alt")


def grade_written_answers(hub, given):
    """Grade each learner's written answers as an instructor does on the formgrader's Manual
    Grading page, through the API that page uses: the submissions waiting for a grader, then each
    written answer's points and comment. ``given``: role -> (points, comment). Returns role ->
    the points given by hand."""
    notebook = Path(NOTEBOOK).stem
    waiting = {s["student"]: s for s in formgrader(hub, "GET",
                                                    f"/submitted_notebooks/{ASSIGNMENT}/{notebook}")}
    points = {}
    for role, (score, comment) in given.items():
        submission = waiting[hub.users[role]]
        assert submission["needs_manual_grade"], f"{role}'s written answer waits for no grader"
        query = urllib.parse.urlencode({"submission_id": submission["id"]})
        grades = [g for g in formgrader(hub, "GET", f"/grades?{query}") if g["needs_manual_grade"]]
        comments = {c["name"]: c for c in formgrader(hub, "GET", f"/comments?{query}")}
        assert grades and all(g["name"].startswith("q_") for g in grades), grades
        for grade in grades:
            formgrader(hub, "PUT", f"/grade/{grade['id']}", data={"manual_score": score})
            formgrader(hub, "PUT", f"/comment/{comments[grade['name']]['id']}",
                       data={"manual_comment": comment})
        points[role] = score * len(grades)
    return points


def inbound(hub, role):
    return sorted((hub.paths["/srv/nbgrader/exchange"] / COURSE_ID / "inbound").glob(
        f"{hub.users[role]}+{ASSIGNMENT}+*"))


def test_a_class_on_jupyterhub_from_the_documentation(hub, tmp_path):
    # ---------------------------------------------------------------- the doc, as written
    hub.run_doc({None, "hub"}, after_accounts=hub.publish_repository)  # the whole setup
    assert "ok:" in hub.run_block(["instructor"], "cd ~/attention-course && "
                                  "/opt/attention-course/env/bin/python -m autograder privacy").stdout
    env = hub.paths["/opt/attention-course"] / "env"
    interpreter = Path(os.path.realpath(env / "bin" / "python"))
    assert not interpreter.is_relative_to(Path.home().resolve()), (
        f"the learners' environment runs {interpreter}, inside root's home")
    assert not list(env.rglob("autograder")), "the grading engine is in the learners' environment"
    assert not list(env.rglob("suites")) and not list(env.rglob("solutions"))
    assert (next(env.glob("lib/python3*/site-packages/helpers")) / "checks.py").exists()
    for role in ("instructor", "alice", "bob"):
        hub.spawn(role)
    students = {s["id"]: s for s in formgrader(hub, "GET", "/students")}  # the doc's roster
    assert {students[hub.users[r]]["first_name"] for r in ("alice", "bob")} == {"Alice", "Bob"}

    # ---------------------------------------------------------------- release (formgrader API)
    assert hub.server("alice", "GET", "/formgrader/api/assignments")[0] == 404
    formgrader(hub, "POST", f"/assignment/{ASSIGNMENT}/assign")
    formgrader(hub, "POST", f"/assignment/{ASSIGNMENT}/release")

    # ---------------------------------------------------------------- fetch and submit
    browser_fetch_and_submit(hub, tmp_path)  # and opens it, then runs her answers, in her lab
    assert len(inbound(hub, "alice")) == 1  # the untouched notebook, submitted from the browser
    time.sleep(1.1)
    put_notebook(hub, "alice", catalogue.filled_notebook(COURSE.assignment(ASSIGNMENT)))
    learner_action(hub, "alice", "submit")  # alice submits again: the latest counts
    assert len(inbound(hub, "alice")) == 2
    learner_action(hub, "bob", "fetch")
    bob, bob_score = bob_notebook(hub)
    put_notebook(hub, "bob", bob)
    learner_action(hub, "bob", "submit")

    # ---------------------------------------------------------------- nothing learners must not see
    # (nbgrader's inbound folder cannot be listed by learners, and each submission's folder has
    # an unguessable name: that is what keeps alice from bob's submission in the exchange.)
    course = hub.home("instructor") / "attention-course"
    exchange_inbound = hub.paths["/srv/nbgrader/exchange"] / COURSE_ID / "inbound"
    secrets_to_keep = [course / "solutions" / ASSIGNMENT, course / "suites",
                       course / ".course" / "gradebook.db", exchange_inbound]
    for role in ("alice", "bob"):
        for path in secrets_to_keep + [hub.home("bob" if role == "alice" else "alice")]:
            peek = run_as(hub.users[role], hub.home(role), "cat" if path.is_file() else "ls",
                          path, check=False)
            assert peek.returncode != 0, f"{role} can read {path}"
        status, _ = hub.server(role, "GET", "/api/contents/../" + hub.users["instructor"])
        assert status in (403, 404)

    # ---------------------------------------------------------------- grade and return (formgrader)
    formgrader(hub, "POST", f"/assignment/{ASSIGNMENT}/collect")
    for role in ("alice", "bob"):
        formgrader(hub, "POST", f"/submission/{ASSIGNMENT}/{hub.users[role]}/autograde")
    submissions = formgrader(hub, "GET", f"/submissions/{ASSIGNMENT}")
    scores = {s["student"]: s["score"] for s in submissions}
    assert scores[hub.users["alice"]] == 8.0 and scores[hub.users["bob"]] == bob_score < 8.0
    comments = {"alice": "Right: axis=1 sums along each row.", "bob": "Half: which axis, not why."}
    by_hand = grade_written_answers(hub, {"alice": (1.0, comments["alice"]),
                                          "bob": (0.5, comments["bob"])})
    submissions = formgrader(hub, "GET", f"/submissions/{ASSIGNMENT}")
    scores = {s["student"]: s["score"] for s in submissions}
    assert scores[hub.users["alice"]] == 8.0 + by_hand["alice"]
    assert scores[hub.users["bob"]] == bob_score + by_hand["bob"]
    assert not any(s["needs_manual_grade"] for s in submissions)
    formgrader(hub, "POST", f"/assignment/{ASSIGNMENT}/generate_feedback")
    formgrader(hub, "POST", f"/assignment/{ASSIGNMENT}/release_feedback")

    for role in ("alice", "bob"):
        learner_action(hub, role, "fetch_feedback")
        pages = list((hub.home(role) / ASSIGNMENT / "feedback").rglob("*.html"))
        assert pages, f"{role} got no feedback"
        html = pages[-1].read_text()
        assert "Hidden tests of" in html and "LEAKED:" not in html
        assert comments[role] in html, f"{role}'s feedback lacks the grader's comment"
        for error in ("Traceback (most recent call last)", "ModuleNotFoundError", "NameError",
                      'data-mime-type="application/vnd.jupyter.stderr"'):
            assert error not in html, f"{role}'s feedback shows {error}"
        other = hub.home("bob" if role == "alice" else "alice")
        assert run_as(hub.users[role], hub.home(role), "ls", other, check=False).returncode != 0

    # ---------------------------------------------------------------- the doc's command line
    hub.run_doc({"release", "grade"})
    rows = {r["student_id"]: r for r in csv.DictReader(open(course / "grades.csv"))}
    assert float(rows[hub.users["alice"]]["score"]) == 8.0 + by_hand["alice"]
    assert float(rows[hub.users["bob"]]["score"]) == bob_score + by_hand["bob"]
