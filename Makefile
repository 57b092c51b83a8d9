# The project's two entry points (see README.md):
#   make demo  - run the main job (a demo on embedded servers when no config is given)
#   make test  - install what the tests need, then run the whole suite against real redis-server processes

GO ?= go

.PHONY: demo test deps vet fuzz bench

demo:
	$(GO) run ./cmd/shardis demo $(ARGS)

# deps installs redis-server and redis-cli from Debian's packages when they are missing.
deps:
	@if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then \
		echo "installing redis-server and redis-tools"; \
		SUDO=; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq redis-server redis-tools >/dev/null; \
	fi
	@redis-server --version

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

test: deps vet
	$(GO) test -race -count=1 -p 1 -timeout 30m ./...
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
