module github.com/symposium-dev/symposium-pm/sdk

go 1.26.0

require (
	deps.dev/util/semver v0.0.0-20260727054525-2946ae4a6141
	github.com/creachadair/jrpc2 v1.3.6
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/mod v0.41.0
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/creachadair/mds v0.31.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
