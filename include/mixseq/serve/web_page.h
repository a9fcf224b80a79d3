// The page `mixseq serve` answers GET / with: one self-contained HTML document (its script and
// style inline; nothing loaded from another host, no fonts) for a person with a browser. It
// asks GET /info what is served and names it (a translator's languages, a recognizer's sample rate,
// a classifier's labels), translates what is typed in its text box as the typing pauses (POST
// /translate, debounced), shows n-best lists and the alignment (a grid of source by target pieces)
// on demand, transcribes an audio file or a recording made in the browser (sent as 16-bit WAV) with
// POST /transcribe, labels a text with POST /classify, plays what POST /synthesize speaks, and draws
// the server's /metrics (requests, batches, latency percentiles) as a small live chart. Sections of
// models the server does not serve stay hidden.
#pragma once

#include <string_view>

namespace mixseq {

std::string_view serve_page_html();

}  // namespace mixseq
