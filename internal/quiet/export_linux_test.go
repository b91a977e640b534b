package quiet

// StatText is statText, the text a kept judgement gives a file's stat.
var StatText = statText
