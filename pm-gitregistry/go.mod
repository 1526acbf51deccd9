module github.com/symposium-dev/symposium-pm/pm-gitregistry

go 1.26
