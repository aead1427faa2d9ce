package workload

import (
	"math/rand/v2"
	"strings"
)

// words are common English words that are one token each in the usual BPE
// vocabularies (GPT-2/cl100k/Llama 3) when preceded by a space, and one
// token in the simulator, so a prompt of n words is close to n tokens.
var vocabulary = strings.Fields(`time year people way day man thing woman life child world school state family
student group country problem hand part place case week company system program question work government
number night point home water room mother area money story fact month lot right study book eye job word
business issue side kind head house service friend father power hour game line end member law car city
community name president team minute idea kid body information back parent face others level office door
health person art war history party result change morning reason research girl guy moment air teacher
force education foot boy age policy process music market sense nation plan college interest death
experience effect use class control care field development role effort rate heart drug show leader light
voice wife police mind price report decision son view relationship town road arm difference value
building action model season society tax director position player record paper space ground form event
official matter center couple site project activity star table need court oil situation cost industry
figure street image phone data picture practice piece land product doctor wall patient worker news test
movie north love support technology step baby computer type attention film tree source organization
hair window evidence population site truth`)

// Prompt returns n words drawn from r, each preceded by a space except the
// first. A random draw per request keeps servers' prefix caches from
// shortening prefill between unrelated requests.
func Prompt(n int, r *rand.Rand) string {
	var b strings.Builder
	b.Grow(n * 8)
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocabulary[r.IntN(len(vocabulary))])
	}
	return b.String()
}

// Vocabulary returns the words synthetic prompts are drawn from.
func Vocabulary() []string { return append([]string(nil), vocabulary...) }
