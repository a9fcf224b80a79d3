// The page `mixseq serve` answers GET / with: one self-contained HTML document (its script and
// style inline; nothing loaded from another host, no fonts) for a person with a browser. It
// translates what is typed in its text box as the typing pauses (POST /translate, debounced), shows
// n-best lists on demand, and draws the server's /metrics (requests, batches, latency percentiles)
// as a small live chart. A server without a translation model (no -c) disables the text box.
#pragma once

#include <string_view>

namespace mixseq {

std::string_view serve_page_html();

}  // namespace mixseq
