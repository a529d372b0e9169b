#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu 22.04 or
# 24.04 base image). It installs bubblewrap and a Python of at least 3.11, then the course's
# pinned environment into /autograder/env, and locks the autograder's files away from learner
# code. `bash setup.sh --dry-run` only resolves every package it would install (pinned exact
# versions, wheels only) with the Python it finds, and installs nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

find_python() {
    for candidate in python3.14 python3.13 python3.12 python3.11 python3; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}

if [ "${1:-}" = "--dry-run" ]; then
    python="$(find_python)" || { echo "no Python 3.11 or newer found" >&2; exit 1; }
    exec "$python" -m pip install --dry-run --quiet --ignore-installed --only-binary=:all: \
        --disable-pip-version-check --target "$(mktemp -d)" -r "$here/requirements.lock"
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends bubblewrap util-linux ca-certificates >/dev/null
if ! python="$(find_python)"; then
    # Ubuntu 22.04's python3 is 3.10: its universe has 3.11.
    apt-get install -y -qq --no-install-recommends python3.11 python3.11-venv >/dev/null
    python="$(find_python)"
fi
apt-get install -y -qq --no-install-recommends "$(basename "$python")-venv" >/dev/null 2>&1 ||
    apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
"$python" -m venv /autograder/env
/autograder/env/bin/pip install --quiet --no-cache-dir --disable-pip-version-check \
    -r "$here/requirements.lock"
# The packages the course's notebooks import (learner/<package>/), as the zip holds them.
if [ -d "$here/learner" ]; then
    cp -R "$here/learner/." "$(/autograder/env/bin/python -c \
        'import sysconfig; print(sysconfig.get_path("purelib"))')/"
fi
# Learner code runs as another user: it may use the environment, never read the suite.
chmod -R go-rwx "$here"
chmod -R go+rX /autograder/env
