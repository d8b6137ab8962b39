package engine

// CallView is how a call is presented (a card). TEMPORARY: the presentation
// vocabulary of §1.11 replaces it.
type CallView struct {
	Card  string
	Title string
}

// ResultView is how a result is presented (a card). TEMPORARY.
type ResultView struct {
	Card  string
	Title string
}
