module github.com/symposium-dev/symposium-pm/testscript

go 1.26
