package shard_test

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/sentinel"
	"github.com/shardis/shardis/shard"
)

// fillEveryField gives every field of the struct v points to a value of
// its own, none of them zero: the n-th value filled is n (a count, or
// seconds for a duration), "value-n-" (a string, a list of one), true, a
// TLS configuration, or a list of one struct filled likewise. A field of
// a type it does not know fails the test: the options that hold secrets
// are encoded (MarshalJSON, MarshalYAML) through a copy made field by
// field, so whoever adds a field must mirror it there, hidden when it is a
// secret, and teach this function its type.
func fillEveryField(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	for i := range v.NumField() {
		f, ft := v.Field(i), v.Type().Field(i)
		*n++
		switch {
		case ft.Type == reflect.TypeFor[*tls.Config]():
			f.Set(reflect.ValueOf(&tls.Config{ServerName: "redis.internal", InsecureSkipVerify: true}))
		case ft.Type == reflect.TypeFor[time.Duration]():
			f.SetInt(int64(time.Duration(*n) * time.Second))
		case ft.Type.Kind() == reflect.Int:
			f.SetInt(int64(*n))
		case ft.Type.Kind() == reflect.Bool:
			f.SetBool(true)
		case ft.Type.Kind() == reflect.String:
			f.SetString(fmt.Sprintf("value-%d-", *n))
		case ft.Type == reflect.TypeFor[[]string]():
			f.Set(reflect.ValueOf([]string{fmt.Sprintf("value-%d-", *n)}))
		case ft.Type.Kind() == reflect.Slice && ft.Type.Elem().Kind() == reflect.Struct:
			f.Set(reflect.MakeSlice(ft.Type, 1, 1))
			fillEveryField(t, f.Index(0), n)
		default:
			t.Fatalf("%s.%s is a %s: mirror it in MarshalJSON and MarshalYAML (hidden if it is a secret) and fill it here", v.Type(), ft.Name, ft.Type)
		}
	}
}

// checkDecoded reports the fields of back, decoded from text, the
// encoding of sent, that did not come back as they were sent: a set
// Password must come back as "***" (and not be in text), a TLSConfig as
// its ServerName and InsecureSkipVerify, every other field as it was.
func checkDecoded(t *testing.T, where string, text []byte, sent, back reflect.Value) {
	t.Helper()
	for i := range sent.NumField() {
		s, b, name := sent.Field(i), back.Field(i), where+"."+sent.Type().Field(i).Name
		switch {
		case s.Type() == reflect.TypeFor[*tls.Config]():
			sc, bc := s.Interface().(*tls.Config), b.Interface().(*tls.Config)
			if bc == nil || bc.ServerName != sc.ServerName || bc.InsecureSkipVerify != sc.InsecureSkipVerify {
				t.Errorf("%s comes back as %+v, want its ServerName %q and InsecureSkipVerify %t", name, bc, sc.ServerName, sc.InsecureSkipVerify)
			}
		case s.Kind() == reflect.Slice && s.Type().Elem().Kind() == reflect.Struct:
			if b.Len() != s.Len() {
				t.Errorf("%s comes back with %d elements, want %d", name, b.Len(), s.Len())
				continue
			}
			for j := range s.Len() {
				checkDecoded(t, fmt.Sprintf("%s[%d]", name, j), text, s.Index(j), b.Index(j))
			}
		case sent.Type().Field(i).Name == "Password":
			if b.String() != "***" {
				t.Errorf("%s comes back as %q, want ***", name, b.String())
			}
			if strings.Contains(string(text), s.String()) {
				t.Errorf("%s is in the encoding", name)
			}
		default:
			if !reflect.DeepEqual(s.Interface(), b.Interface()) {
				t.Errorf("%s comes back as %v, want %v", name, b.Interface(), s.Interface())
			}
		}
	}
}

// TestReview10EncodingsKeepEveryOptionValue: the options that hold
// passwords (pool.Options, sentinel.Options, shard.SentinelOptions and
// shard.SentinelShard) are encoded through a copy made field by field, so
// that a set Password shows as "***" and a TLSConfig as its ServerName
// and InsecureSkipVerify. Every other field must come back from JSON and
// YAML as it was, and the copy must list the fields in their order: a
// field added to a type and to its copy, but not copied, would encode as
// its zero value, which the check of the field names alone
// (TestReview9SecretsStayOutOfJSONAndYAML) does not see.
func TestReview10EncodingsKeepEveryOptionValue(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[pool.Options](),
		reflect.TypeFor[sentinel.Options](),
		reflect.TypeFor[shard.SentinelOptions](),
		reflect.TypeFor[shard.SentinelShard](),
	} {
		t.Run(typ.String(), func(t *testing.T) {
			sent := reflect.New(typ)
			n := 0
			fillEveryField(t, sent.Elem(), &n)
			var names []string
			for f := range typ.Fields() {
				names = append(names, f.Name)
			}

			j, err := json.Marshal(sent.Interface())
			if err != nil {
				t.Fatal(err)
			}
			last := -1
			for _, name := range names {
				at := strings.Index(string(j), `"`+name+`":`)
				if at < 0 || at < last {
					t.Errorf("the JSON lacks %s or has it out of the order of %s: %s", name, typ, j)
				}
				last = at
			}
			y, err := yaml.Marshal(sent.Interface())
			if err != nil {
				t.Fatal(err)
			}
			for _, enc := range []struct {
				how       string
				text      []byte
				unmarshal func([]byte, any) error
			}{{"JSON", j, json.Unmarshal}, {"YAML", y, yaml.Unmarshal}} {
				back := reflect.New(typ)
				if err := enc.unmarshal(enc.text, back.Interface()); err != nil {
					t.Fatalf("%s: %v", enc.how, err)
				}
				checkDecoded(t, enc.how+" of "+typ.Name(), enc.text, sent.Elem(), back.Elem())
				if t.Failed() {
					t.Logf("the %s: %s", enc.how, enc.text)
				}
			}

			// What the YAML encoders are given has the fields of the
			// type, in their order.
			fields, err := sent.Interface().(yaml.Marshaler).MarshalYAML()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for f := range reflect.TypeOf(fields).Fields() {
				got = append(got, f.Name)
			}
			if !reflect.DeepEqual(got, names) {
				t.Errorf("MarshalYAML gives the fields %v, %s has %v", got, typ, names)
			}
		})
	}
}
