package units

import "testing"

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Duration(0.0001), "<1 µs"}, {Duration(0.013), "13 µs"}, {Duration(1.78), "1.78 ms"},
		{Duration(194.4), "194 ms"}, {Duration(5600), "5.60 s"}, {Duration(18600), "18.6 s"},
		{Bytes(766), "766 B"}, {Bytes(2640), "2.64 kB"}, {Bytes(13.1e6), "13.1 MB"},
		{Count(60000), "60,000"}, {Count(1234.5), "1,234.5"}, {RPS(55106.6), "55,107"},
		{Ratio(222.4), "222×"}, {Ratio(3.44), "3.4×"}, {Ratio(1.08), "1.08×"}, {Ratio(1234), "1,234×"},
		{GroupThousands("-1234567.5"), "-1,234,567.5"}, {Decimals(1531.6, 9.995, 99.95), "1,532"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
