"""Build the engine's own wheel (autograder-engine) into a folder:

    python packaging/engine/build.py dist/

It stages this folder's pyproject.toml and README.md with the package ``autograder`` minus
``autograder/tools`` (this course's own tools), then builds with the interpreter's setuptools, no
network. It prints the wheel's path.
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def build(output: Path) -> Path:
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        stage = Path(folder)
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(HERE / name, stage / name)
        shutil.copytree(REPO / "autograder", stage / "autograder",
                        ignore=shutil.ignore_patterns("__pycache__", "tools"))
        before = set(output.glob("*.whl"))
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                        "--no-build-isolation", "--disable-pip-version-check",
                        "--wheel-dir", str(output), str(stage)], check=True)
    built = sorted(set(output.glob("autograder_engine-*.whl")) - before) or \
        sorted(output.glob("autograder_engine-*.whl"))
    return built[-1]


if __name__ == "__main__":
    print(build(Path(sys.argv[1] if len(sys.argv) > 1 else "dist")))
