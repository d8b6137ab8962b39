package hostapi

import "weak"

// SetWeak sets m[weak.Make(k)] = v: a map of script objects to Go values
// that does not keep the objects alive. The entries of collected objects
// are swept as the map grows, each time it has doubled (plus a few) since
// the last sweep, whose size *swept holds.
func SetWeak[K, V any](m map[weak.Pointer[K]]V, swept *int, k *K, v V) {
	if len(m) >= 2*(*swept)+64 {
		for p := range m {
			if p.Value() == nil {
				delete(m, p)
			}
		}
		*swept = len(m)
	}
	m[weak.Make(k)] = v
}
