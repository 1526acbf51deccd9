module github.com/symposium-dev/symposium-pm/pm-pypi

go 1.26
