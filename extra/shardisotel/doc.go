// Package shardisotel traces and measures a shardis client with OpenTelemetry.
package shardisotel
