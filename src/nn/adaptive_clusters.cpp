#include "mixseq/nn/adaptive_clusters.h"

#include "mixseq/util/error.h"

namespace mixseq {

int64_t AdaptiveClusters::begin(int64_t cluster) const { return cluster == 0 ? 0 : cutoffs[cluster - 1]; }

int64_t AdaptiveClusters::end(int64_t cluster) const {
  return cluster + 1 < count() ? cutoffs[cluster] : vocab_size;
}

int64_t AdaptiveClusters::dim(int64_t cluster) const {
  int64_t width = embed_dim;
  for (int64_t i = 0; i < cluster; ++i) width /= div_val;
  return width;
}

void AdaptiveClusters::check(const std::string& owner) const {
  MIXSEQ_CHECK(vocab_size >= 2, owner, ": the vocabulary needs at least 2 words, got ", vocab_size);
  MIXSEQ_CHECK(embed_dim > 0 && proj_dim > 0, owner, ": d_embed (", embed_dim, ") and d_model (", proj_dim,
               ") must be positive");
  MIXSEQ_CHECK(div_val >= 1, owner, ".div_val must be at least 1, got ", div_val);
  int64_t previous = 0;
  for (const int64_t cutoff : cutoffs) {
    MIXSEQ_CHECK(cutoff > previous && cutoff < vocab_size, owner, ".cutoffs must increase strictly between 0 and ",
                 "the vocabulary size ", vocab_size, " (exclusive), got ", cutoff, " after ", previous);
    previous = cutoff;
  }
  MIXSEQ_CHECK(dim(count() - 1) >= 1, owner, ": with d_embed ", embed_dim, " and div_val ", div_val, " cluster ",
               count() - 1, " would have vectors of width 0; lower div_val or use fewer cutoffs");
}

}  // namespace mixseq
