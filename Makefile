# Everything squall needs on a fresh Debian machine is installed from here.
VENV    := .venv
PY      := $(VENV)/bin/python
SQUALL  := $(VENV)/bin/squall
ZK_JAR  := /usr/share/java/zookeeper.jar
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# pytest processes for `make test` (pytest-xdist): a test file stays on one of them, so its
# module-scoped ZooKeeper or cluster starts once. Two halve the suite's time on a 2-core
# machine (17 min 53 s -> 11 min 31 s, 2026-11-27): most of a test is waiting on processes.
TEST_PROCESSES ?= 2

.PHONY: demo test lint bench system-deps venv bytecode clean

demo: system-deps venv bytecode
	rm -rf .demo-out
	$(SQUALL) local examples/wordcount.py --output-dir .demo-out
	$(PY) examples/wordcount.py verify .demo-out

test: system-deps venv bytecode
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m squall.type_check
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_PROCESSES) --dist loadfile --durations=25

bench: system-deps venv
	$(PY) bench/scheduler.py
	@$(PY) -c 'import bytewax' 2>/dev/null || $(VENV)/bin/pip install -q --no-build-isolation -e '.[bench]'
	$(PY) bench/pertuple.py

# System packages: ZooKeeper (Debian's package, which brings Java) for every cluster,
# PostgreSQL for the tests of the store on a PostgreSQL URL, and Chromium for the web UI's
# browser test (driven by Playwright at /usr/bin/chromium; no browser download), and a C
# compiler with Python's headers for the per-tuple path that the install compiles (mypyc).
system-deps:
	@if ! command -v java >/dev/null 2>&1 || [ ! -f $(ZK_JAR) ] || ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || [ ! -x /usr/bin/chromium ] || ! command -v cc >/dev/null 2>&1 || ! python3 -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then \
		echo "installing zookeeper, java, postgresql, chromium, gcc and Python's headers with apt-get"; \
		$(SUDO) apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends zookeeper default-jre-headless postgresql chromium gcc libc6-dev python3-dev; \
	fi

# The install compiles the per-tuple path with mypyc (setup.py; a minute and a half on two
# cores): extensions beside worker/'s sources. A process runs the sources instead where one
# of them changed since (squall/hot_path.py), so after an edit `make venv` compiles again.
venv: $(VENV)/.installed
	@$(PY) -c 'import sys, squall.hot_path as h; sys.exit(not h.select().compiled)' 2>/dev/null \
		|| $(VENV)/bin/pip install -q --no-deps --no-build-isolation -e .

$(VENV)/.installed: pyproject.toml setup.py
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test]'
	touch $@

# Bytecode for squall's own modules, as a wheel's install writes it: every worker, nimbus and
# CLI process imports them, and where PYTHONDONTWRITEBYTECODE is set (CI machines) each
# process compiled them all again, 0.15-0.2 s of every worker's start. Only changed
# sources are compiled again; a stale file is never used (Python checks the source).
bytecode: venv
	$(PY) -m compileall -q squall nimbus supervisor worker >/dev/null

clean:
	rm -rf $(VENV) .demo-out .squall *.egg-info build squall/hot_path_build.json
	rm -f squall/*.so worker/*.so
