package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/money"
)

// Spend is what pay per crawl cost (audit fields price, charged, currency,
// not_paid): over the whole log, per identity and per host. Only lines
// with one of those fields count. Sums are exact: charged amounts are
// added in millionths of the currency unit, as the proxy writes them.
type Spend struct {
	// Priced counts the lines with a price, a charge or a not_paid
	// reason; Paid those with a charge.
	Priced uint64 `json:"priced"`
	Paid   uint64 `json:"paid"`
	// Charged is the sum charged per currency, by currency code.
	Charged []Money `json:"charged"`
	// NotPaid counts the unpaid 402 answers by reason (the auditlog
	// NotPaid values; anything else counts as "other").
	NotPaid map[string]uint64 `json:"not_paid"`
	// Unsummed counts charges that are in no sum: an amount that does not
	// read as pay per crawl's (money.ParseAmount), a currency past the
	// MaxSpendCurrencies of a row, or a sum past 9.2 million million
	// units.
	Unsummed uint64 `json:"unsummed"`
	// Identities has one row per identity: "user:NAME" when the line has
	// a proxy user, else "token:TOKEN" (the product token); Hosts one per
	// destination host. The most priced lines first.
	Identities Section[SpendRow] `json:"identities"`
	Hosts      Section[SpendRow] `json:"hosts"`
}

// SpendRow is one identity's or host's spend; the fields are Spend's.
type SpendRow struct {
	Key      string            `json:"key"`
	Priced   uint64            `json:"priced"`
	Paid     uint64            `json:"paid"`
	Charged  []Money           `json:"charged"`
	NotPaid  map[string]uint64 `json:"not_paid"`
	Unsummed uint64            `json:"unsummed,omitempty"`
	Error    uint64            `json:"error,omitempty"`
}

// Money is a sum in one currency: Amount is a decimal string ("0.07").
type Money struct {
	Currency string `json:"currency"`
	Amount   string `json:"amount"`
}

// MaxSpendCurrencies is how many currencies a spend row sums; charges in
// more count in Unsummed.
const MaxSpendCurrencies = 4

// notPaidReasons are the not_paid values, in the order of
// spendStats.notPaid; anything else counts as the last, "other".
var notPaidReasons = [...]string{auditlog.NotPaidNoBudget, auditlog.NotPaidCurrency, auditlog.NotPaidOverMaxPrice,
	auditlog.NotPaidOverBudget, auditlog.NotPaidStoreUnavailable, auditlog.NotPaidBadPrice, auditlog.NotPaidBody,
	auditlog.NotPaidPriceChanged, auditlog.NotPaidRefused, auditlog.NotPaidRetryFailed,
	auditlog.NotPaidUnknownOutcome, auditlog.NotPaidBreach, auditlog.NotPaidReportOnly, "other"}

// sum is an exact sum in one currency.
type sum struct {
	cur    [3]byte
	amount money.Amount
}

// spendStats is a spend row's payload (and the totals'): fixed size, no
// heap.
type spendStats struct {
	priced, paid, unsummed uint64
	notPaid                [len(notPaidReasons)]uint64
	sums                   [MaxSpendCurrencies]sum
	nSums                  int
}

// priced reports whether r has a payment field.
func (r *record) priced() bool {
	return len(r.Price) > 0 || len(r.Charged) > 0 || len(r.NotPaid) > 0
}

func (s *spendStats) add(r *record) {
	s.priced++
	if len(r.NotPaid) > 0 {
		i := len(notPaidReasons) - 1
		for j, name := range notPaidReasons[:i] {
			if string(r.NotPaid) == name {
				i = j
				break
			}
		}
		s.notPaid[i]++
	}
	if len(r.Charged) == 0 {
		return
	}
	s.paid++
	m, err := money.ParseAmount(string(r.Charged))
	if err != nil || len(r.Currency) != 3 || !s.addSum([3]byte(r.Currency), m) {
		s.unsummed++
	}
}

// addSum adds m to the currency's sum; false when it cannot (no room for
// another currency, or the sum would overflow).
func (s *spendStats) addSum(cur [3]byte, m money.Amount) bool {
	for i := range s.nSums {
		if s.sums[i].cur == cur {
			if s.sums[i].amount > math.MaxInt64-m {
				return false
			}
			s.sums[i].amount += m
			return true
		}
	}
	if s.nSums == MaxSpendCurrencies {
		return false
	}
	s.sums[s.nSums] = sum{cur: cur, amount: m}
	s.nSums++
	return true
}

// money returns the sums, by currency code.
func (s *spendStats) money() []Money {
	out := make([]Money, 0, s.nSums)
	for _, x := range s.sums[:s.nSums] {
		out = append(out, Money{Currency: string(x.cur[:]), Amount: x.amount.String()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Currency < out[j].Currency })
	return out
}

// reasons returns the not-paid counts by reason, without zeros.
func (s *spendStats) reasons() map[string]uint64 {
	m := map[string]uint64{}
	for i, n := range s.notPaid {
		if n > 0 {
			m[notPaidReasons[i]] = n
		}
	}
	return m
}

// spendKey is the identity key of a priced line: "user:NAME" or
// "token:TOKEN".
func (a *aggregator) spendKey(r *record) []byte {
	if len(r.User) > 0 {
		a.keyBuf = append(append(a.keyBuf[:0], "user:"...), r.User...)
	} else {
		a.keyBuf = append(append(a.keyBuf[:0], "token:"...), r.Token...)
	}
	return a.keyBuf
}

// addSpend counts a priced line.
func (a *aggregator) addSpend(r *record, host []byte) {
	if !r.priced() {
		return
	}
	a.spend.add(r)
	a.spendIDs.add(a.spendKey(r), 1).add(r)
	a.spendHosts.add(host, 1).add(r)
}

// buildSpend renders the spend state.
func (a *aggregator) buildSpend(top int) Spend {
	s := &a.spend
	return Spend{Priced: s.priced, Paid: s.paid, Charged: s.money(), NotPaid: s.reasons(), Unsummed: s.unsummed,
		Identities: section(a.spendIDs, top, spendRow), Hosts: section(a.spendHosts, top, spendRow)}
}

func spendRow(e *topEntry[spendStats]) SpendRow {
	p := &e.p
	return SpendRow{Key: orNone(e.key), Priced: e.count, Paid: p.paid, Charged: p.money(), NotPaid: p.reasons(),
		Unsummed: p.unsummed, Error: e.err}
}

// spendTables are the spend section for the text, csv and html formats.
// spendTables are the pay per crawl tables; text and html leave them out
// when no line was priced (pay per crawl off).
func spendTables(s Spend) []table {
	off := s.Priced == 0
	tot := table{name: "spend", title: "Spend (pay per crawl)", whole: true, off: off,
		cols: spendCols("", ""), rows: [][]any{{s.Priced, s.Paid, moneyText(s.Charged), reasonsText(s.NotPaid), s.Unsummed}}}
	ids := spendTable("spend_identities", "Spend per identity", "identity", s.Identities)
	hosts := spendTable("spend_hosts", "Spend per host", "host", s.Hosts)
	ids.off, hosts.off = off, off
	return []table{tot, ids, hosts}
}

// spendCols are the spend columns, led by the row's key when what is set.
func spendCols(what, label string) []column {
	var cs []column
	if what != "" {
		cs = append(cs, col(what, label))
	}
	cs = append(cs, col("priced", "priced requests"), col("paid", "paid"), col("charged", "charged"),
		col("not_paid", "not paid (why)"), column{key: "unsummed", label: "charges not summed", show: sparse})
	if what != "" {
		cs = append(cs, errCol)
	}
	return cs
}

func spendTable(name, title, what string, s Section[SpendRow]) table {
	t := table{name: name, title: title, notes: sectionNotes(s, what+"s"), cols: spendCols(what, what)}
	for _, r := range s.Rows {
		t.rows = append(t.rows, []any{r.Key, r.Priced, r.Paid, moneyText(r.Charged), reasonsText(r.NotPaid), r.Unsummed, r.Error})
	}
	return t
}

// moneyText is "USD 0.07; EUR 1".
func moneyText(ms []Money) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.Currency + " " + m.Amount
	}
	return strings.Join(parts, "; ")
}

// reasonsText is "over-budget 13; no-budget 2", the most first.
func reasonsText(m map[string]uint64) string {
	keys := sortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, "; ")
}
