package pool_test

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/shardis/shardis/pool"
)

// Options encode to JSON (MarshalJSON) and YAML (MarshalYAML) field by
// field, a set password as ***, so that a structured log of them never
// shows the secret.
func ExampleOptions_MarshalJSON() {
	o := pool.Options{Username: "app", Password: "s3cret", DB: 2}
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{} // a stable output
		}
		return a
	}
	slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime})).Info("pool", "options", o)
	y, _ := o.MarshalYAML() // what a YAML encoder writes, field by field
	fmt.Printf("%+v\n", y)
	// Output:
	// {"level":"INFO","msg":"pool","options":{"MaxIdle":0,"MaxActive":0,"IdleTimeout":0,"MaxConnLifetime":0,"Wait":false,"TestOnBorrow":0,"DialTimeout":0,"ReadTimeout":0,"WriteTimeout":0,"Username":"app","Password":"***","DB":2,"ClientName":"","TLSConfig":null,"ReadOnly":false}}
	// {MaxIdle:0 MaxActive:0 IdleTimeout:0s MaxConnLifetime:0s Wait:false TestOnBorrow:0s DialTimeout:0s ReadTimeout:0s WriteTimeout:0s Username:app Password:*** DB:2 ClientName: TLSConfig:<nil> ReadOnly:false}
}
