module github.com/gatehouse/gatehouse

go 1.26.0

require golang.org/x/sys v0.50.0

require (
	github.com/bmatcuk/doublestar/v4 v4.10.4
	github.com/rogpeppe/go-internal v1.16.0
)

require golang.org/x/tools v0.26.0 // indirect
