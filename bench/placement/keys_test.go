package placement

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGenerateKeys(t *testing.T) {
	for _, c := range []struct {
		pattern string
		n       int
		want    []string
	}{
		{"user:{id}:profile", 3, []string{"user:0:profile", "user:1:profile", "user:2:profile"}},
		{"{id}", 2, []string{"0", "1"}},
		{"{id}-{id}", 2, []string{"0-0", "1-1"}},
		{"{{id}}.tagged", 1, []string{"{0}.tagged"}},
	} {
		got, err := GenerateKeys(c.pattern, c.n)
		require.NoError(t, err, c.pattern)
		assert.Equal(t, c.want, got, c.pattern)
	}
	for _, c := range []struct {
		pattern string
		n       int
	}{{"user:1", 10}, {"{id}", 0}, {"{id}", -1}, {"", 5}} {
		_, err := GenerateKeys(c.pattern, c.n)
		assert.ErrorIs(t, err, ErrBadInput, "%q %d", c.pattern, c.n)
	}
}

func TestReadKeys(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"a\nb\n", []string{"a", "b"}},
		{"a\nb", []string{"a", "b"}},
		{"a\r\n\nb", []string{"a\r", "", "b"}},
	} {
		got, err := ReadKeys(strings.NewReader(c.in))
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%q", c.in)
	}
	_, err := ReadKeys(strings.NewReader(""))
	assert.ErrorIs(t, err, ErrBadInput)
	boom := errors.New("disk on fire")
	_, err = ReadKeys(iotest.ErrReader(boom))
	assert.ErrorIs(t, err, boom)
}

func TestLayouts(t *testing.T) {
	l := EqualLayout(300)
	assert.Equal(t, "300 equal", l.Name)
	assert.Equal(t, "shard-1", l.Shards[0].Name)
	assert.Equal(t, "10.0.0.1:6379", l.Shards[0].Addr)
	assert.Equal(t, "10.0.1.44:6379", l.Shards[299].Addr)
	assert.False(t, l.Weighted())
	assert.NoError(t, l.validate())

	w := WeightedLayout(1, 2, 3, 4)
	assert.Equal(t, "weighted 1:2:3:4", w.Name)
	assert.True(t, w.Weighted())
	assert.Equal(t, 10, w.TotalWeight())
	assert.Equal(t, 1, addedShard(w).Weight)
	assert.Equal(t, "shard-5", addedShard(w).Name)

	p, err := ParseLayout("127.0.0.1:7000:2 shard-5,127.0.0.1:7001")
	require.NoError(t, err)
	assert.True(t, p.Weighted())
	assert.Equal(t, "--shards (2)", p.Name)
	// The generated shard-3 name is free, but shard-5 is taken: the added
	// shard must not clash with either name.
	added := addedShard(p)
	assert.Equal(t, "shard-3", added.Name)
	p2, err := ParseLayout("127.0.0.1:7000 shard-3,127.0.0.1:7001")
	require.NoError(t, err)
	assert.Equal(t, "shard-4", addedShard(p2).Name)

	for _, bad := range []string{"", "nohost", "127.0.0.1:1:0", "127.0.0.1:1,127.0.0.1:1"} {
		_, err := ParseLayout(bad)
		assert.ErrorIs(t, err, ErrBadInput, bad)
	}
}
