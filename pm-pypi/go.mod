module github.com/symposium-dev/symposium-pm/pm-pypi

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	golang.org/x/net v0.62.0 // indirect
)
