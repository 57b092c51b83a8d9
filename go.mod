module github.com/shardis/shardis

go 1.26

require (
	github.com/alicebob/miniredis/v2 v2.40.0 // indirect
	github.com/gomodule/redigo v1.9.3 // indirect
	github.com/spaolacci/murmur3 v1.1.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
)
