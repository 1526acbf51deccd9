module github.com/symposium-dev/symposium-pm/pm-npm

go 1.26
