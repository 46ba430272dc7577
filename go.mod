module github.com/gatehouse/gatehouse

go 1.26.0

require golang.org/x/sys v0.50.0

require github.com/bmatcuk/doublestar/v4 v4.10.4
