module github.com/symposium-dev/symposium-pm/pm-fixture

go 1.26
