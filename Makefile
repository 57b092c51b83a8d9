# The project's two entry points (see README.md):
#   make demo  - run the main job (a demo on embedded servers when no config is given)
#   make test  - install what the tests need, then run the whole suite against real redis-server processes

GO ?= go

.PHONY: demo test deps vet lint fuzz bench stress

demo:
	$(GO) run ./cmd/shardis demo $(ARGS)

# deps installs redis-server, redis-cli and redis-sentinel (and gcc, promtool) from Debian's packages when they are missing.
deps:
	@if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then \
		echo "installing redis-server and redis-tools"; \
		SUDO=; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq redis-server redis-tools redis-sentinel >/dev/null; \
	fi
	@if ! command -v redis-sentinel >/dev/null 2>&1; then \
		echo "installing redis-sentinel"; \
		SUDO=; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq redis-sentinel >/dev/null; \
	fi
	@if ! command -v cc >/dev/null 2>&1; then \
		echo "installing gcc (a test builds a small Redis module)"; \
		SUDO=; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq gcc libc6-dev >/dev/null; \
	fi
	@if ! command -v promtool >/dev/null 2>&1; then \
		echo "installing prometheus (for promtool, which checks the exported metric names)"; \
		SUDO=; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null; \
	fi
	@redis-server --version

# MODULES are the directories of every Go module in the repo: the library
# itself and the nested ones (bench/peers, extra/*), each with its own go.mod.
MODULES := $(patsubst %/go.mod,%,$(shell find . -name go.mod -not -path './.git/*' | sort))

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	@for m in $(MODULES); do echo "go vet ($$m)"; (cd $$m && $(GO) vet ./...) || exit 1; done

# lint runs staticcheck (the version the project standardises on) over every module.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	@for m in $(MODULES); do echo "staticcheck ($$m)"; (cd $$m && $(STATICCHECK) ./...) || exit 1; done

test: deps vet lint
	@for m in $(MODULES); do echo "go test ($$m)"; (cd $$m && $(GO) test -race -count=1 -p 1 -timeout 60m ./...) || exit 1; done
	# Allocation counts once more without -race, whose sync.Pool drops items.
	$(GO) test -count=1 -p 1 -run 'Alloc' ./...

# fuzz runs every fuzz target of every package for a short while (FUZZTIME).
FUZZTIME ?= 10s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list 'Fuzz.*' $$pkg | grep ^Fuzz); do \
			$(GO) test -run=^$$ -fuzz=^$$f$$ -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

bench:
	$(GO) test -run=^$$ -bench=. -benchmem ./bench/...

# stress runs make test STRESS_RUNS times (5) in a row under stress-ng --cpu 1,
# printing each run's time (.ci/stress): the suite must pass on a loaded machine.
stress:
	@bash .ci/stress
