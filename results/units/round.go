package units

import (
	"math"
	"time"
)

// Round is v to places decimal places, a half rounded away from zero (math.Round's rule, so
// -1.25 rounds to -1.3 as 1.25 to 1.3): how a report stores a figure it computed, a mean to
// the µs (3 places of ms), a share to 4. A v with no digits left beyond places at float64's
// precision (|v·10^places| ≥ 2^52), an infinity and NaN come back as they are.
func Round(v float64, places int) float64 {
	p := math.Pow10(places)
	s := v * p
	if math.IsNaN(s) || math.Abs(s) >= 1<<52 {
		return v
	}
	return math.Round(s) / p
}

// Ms is a measured duration in a report's milliseconds, to the microsecond (cut, as
// time.Duration.Microseconds cuts).
func Ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
