package politeness

// expiry is a LocalScheduler's queue of records, earliest at first: a
// container/heap whose records know their index.
type expiry []*record

func (q expiry) Len() int           { return len(q) }
func (q expiry) Less(i, j int) bool { return q[i].at.Before(q[j].at) }

func (q expiry) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}

func (q *expiry) Push(x any) {
	r := x.(*record)
	r.index = len(*q)
	*q = append(*q, r)
}

func (q *expiry) Pop() any {
	old := *q
	r := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	r.index = -1
	return r
}
