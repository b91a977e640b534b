package apierror

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResetTime(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		details string
		want    time.Time
		ok      bool
	}{
		{"Claude AI usage limit reached|1795521600", time.Unix(1795521600, 0), true},
		{`429 {"type":"error","error":{"type":"rate_limit_error","message":"Rate limited. Retry after 120 seconds."}}`, now.Add(120 * time.Second), true},
		{"try again in 5 minutes", now.Add(5 * time.Minute), true},
		{"limit resets at 2026-11-24T14:30:00Z", time.Date(2026, 11, 24, 14, 30, 0, 0, time.UTC), true},
		{"overloaded", time.Time{}, false},
		{"resets at 2031-01-01T00:00:00Z", time.Time{}, false}, // too far to believe
		{"", time.Time{}, false},
	} {
		got, ok := ResetTime(tc.details, now)
		assert.Equal(t, tc.ok, ok, tc.details)
		if tc.ok {
			assert.True(t, tc.want.Equal(got), "%s: got %s", tc.details, got)
		}
	}
}

func TestWriteReadClear(t *testing.T) {
	dir := t.TempDir()
	assert.Nil(t, Read(dir))
	require.NoError(t, Write(dir, Record{Kind: "rate_limit", ResetAt: "2026-11-24T14:30:00Z"}))
	assert.Equal(t, "rate_limit", Read(dir).Kind)
	Clear(dir)
	assert.Nil(t, Read(dir))
}
