# HotKV's map: `make help` lists the targets.
GO ?= go
PORT ?= 6379

.PHONY: help run build test race cover fuzz bench bench-vs bench-aof bench-replica bench-snapshot bench-acl bench-tls bench-hostile bench-overhead crash golden ci fmt vet redis-ref redis-exporter redis-suite redis-suite-spawned metrics

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

run: ## run the server on 127.0.0.1:$(PORT)
	$(GO) run ./cmd/hotkv --port $(PORT)

cli: ## run hotkv-cli against 127.0.0.1:$(PORT) (try: make cli ARGS="tour locks")
	$(GO) run ./cmd/hotkv-cli -p $(PORT) $(ARGS)

build: ## build bin/hotkv
	$(GO) build -o bin/hotkv ./cmd/hotkv

test: ## run every test (differential tests need the reference: make redis-ref)
	$(GO) test ./...

redis-ref: ## build the reference redis-server 8.6.3 into ~/.cache/hotkv (once)
	bash .ci/redis-ref.sh

redis-exporter: ## build redis_exporter v1.88.0 into ~/.cache/hotkv (the metrics diff test uses it)
	bash .ci/redis-exporter.sh

metrics: ## run the server with /metrics and the status page on 127.0.0.1:$(METRICS_PORT) (default 9121)
	go run ./cmd/hotkv --port $(PORT) --metrics-port $${METRICS_PORT:-9121}

race: ## run every test with the race detector, as CI does
	$(GO) test -race -count=1 ./...

cover: ## test with a coverage report in cover.html
	$(GO) test -coverprofile=cover.out ./... && $(GO) tool cover -html=cover.out -o cover.html

fuzz: ## run each fuzz target for FUZZTIME (default 20s)
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $${FUZZTIME:-20s} $$pkg || exit 1; \
	  done; \
	done

bench: ## Go benchmarks of the hot paths with -benchmem
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...

bench-vs: ## redis-benchmark against HotKV and redis-server side by side (see bench/README.md)
	bench/run.sh

bench-aof: ## the AOF side by side with redis-server 8.6.3 (everysec, always) and against HotKV without AOF
	bench/aof.sh

bench-refusal: ## under appendfsync always with a slow disk (SLEEP_US), how long a GET and a refused SET NX wait beside writers, side by side with redis-server
	bench/refusal-latency.sh

bench-replica: ## a primary with one replica against none and against redis-server with one (SET, lock acquire)
	bench/replica.sh

bench-snapshot: ## the longest PING wait during BGSAVE, BGREWRITEAOF, CONFIG SET appendonly yes, side by side with redis-server (KEYS=1000000)
	bench/snapshot.sh

bench-acl: ## the ACL check's cost: a restricted default user against an unrestricted one, side by side
	bench/acl.sh

bench-tls: ## TLS side by side with Debian's redis-server (SET/GET, plain and -P 16)
	bench/tls.sh

bench-hostile: ## the hostile-client battery against HotKV and redis-server: probe waits and peak RSS (FOR=5s)
	bench/hostile.sh

bench-overhead: ## what observability costs: HEAD against a build without it (HEAD_TAGS=hotkv_lockfloor: the lock view's floor)
	bench/overhead.sh

crash: ## the AOF crash harness: SIGKILL under load CYCLES times (default 100), FSYNC=always|everysec
	$(GO) build -o bin/hotkv ./cmd/hotkv && $(GO) run ./cmd/hotkv-crash -bin bin/hotkv -fsync $${FSYNC:-always} -cycles $${CYCLES:-100}

sentinel-failover: ## Redis Sentinel failing over HotKV processes, ROUNDS kills of the master (default 20)
	ROUNDS=$${ROUNDS:-20} $(GO) test ./internal/sentineltest -run TestSentinelFailover -count 1 -v -timeout 60m

golden: ## rewrite golden files from HotKV's replies (review the diff!)
	$(GO) test ./internal/command/ -run TestGolden -update

fmt: ## gofmt every file
	gofmt -w $$(git ls-files '*.go')

vet: ## go vet
	$(GO) vet ./...

redis-suite: ## Redis 8.6.3's Tcl suite against a running HotKV on $(PORT) (35 units; REDIS_SRC: a Redis tree)
	REDIS_SRC=$${REDIS_SRC:-$$(dirname $$(dirname $$(bash .ci/redis-ref.sh)))} bash .ci/redis-suite.sh 127.0.0.1 $(PORT) $(UNITS)

redis-suite-spawned: ## Redis's Tcl suite starting HotKV itself as src/redis-server, beside redis-server 8.6.3 (UNITS=...)
	bash .ci/redis-suite-spawned.sh $(UNITS)

ci: ## what CI runs (.ci/run)
	bash .ci/run
