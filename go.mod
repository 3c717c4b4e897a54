module gpusim

go 1.26

require go.yaml.in/yaml/v3 v3.0.6

require (
	github.com/rogpeppe/go-internal v1.16.0
	golang.org/x/sys v0.26.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
