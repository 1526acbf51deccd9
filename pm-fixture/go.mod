module github.com/symposium-dev/symposium-pm/pm-fixture

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	golang.org/x/tools v0.51.0
)

require (
	github.com/creachadair/jrpc2 v1.3.6 // indirect
	github.com/creachadair/mds v0.31.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
