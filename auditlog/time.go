package auditlog

import "time"

// ParseTime reads an audit line's FieldTime, an RFC 3339 time, as
// seconds since the Unix epoch (fractions dropped): "2006-01-02T15:04:05Z"
// quickly, any other RFC 3339 form (fractions, offsets) through package
// time. ok is false when v is not RFC 3339.
func ParseTime(v []byte) (int64, bool) {
	if len(v) == 20 && v[4] == '-' && v[7] == '-' && v[10] == 'T' && v[13] == ':' && v[16] == ':' && v[19] == 'Z' {
		y, ok1 := decimal(v[0:4])
		mo, ok2 := decimal(v[5:7])
		d, ok3 := decimal(v[8:10])
		h, ok4 := decimal(v[11:13])
		mi, ok5 := decimal(v[14:16])
		s, ok6 := decimal(v[17:19])
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysIn(mo, y) && h < 24 && mi < 60 && s < 60 {
			return daysFromCivil(y, mo, d)*86400 + h*3600 + mi*60 + s, true
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(v))
	if err != nil {
		return 0, false
	}
	return t.Unix(), true
}

func decimal(b []byte) (int64, bool) {
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func daysIn(m, y int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// floorDiv is a/b rounded towards negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
