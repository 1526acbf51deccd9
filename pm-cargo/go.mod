module github.com/symposium-dev/symposium-pm/pm-cargo

go 1.26
