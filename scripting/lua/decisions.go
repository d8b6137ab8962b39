package lua

import "github.com/dsh-go/dsh/dsl"

// decisionSchema makes empty content, feedback and additionalContexts tables
// arrays, as the decision shapes say.
var decisionSchema = dsl.NewObject(dsl.Member{Key: "type", Value: "object"}, dsl.Member{Key: "properties", Value: dsl.NewObject(
	dsl.Member{Key: "content", Value: arraySchema}, dsl.Member{Key: "feedback", Value: arraySchema},
	dsl.Member{Key: "additionalContexts", Value: arraySchema})})
