module orch.io/bench/go-watch-client

go 1.19
