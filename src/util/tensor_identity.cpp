#include "mixseq/util/tensor_identity.h"

namespace mixseq {

TensorIdentity::TensorIdentity(const torch::Tensor& tensor) {
  if (!tensor.defined()) return;
  storage_ = tensor.storage();
  data_ = tensor.data_ptr();
  sizes_ = tensor.sizes().vec();
  strides_ = tensor.strides().vec();
  version_ = tensor._version();
}

bool TensorIdentity::matches(const torch::Tensor& tensor) const {
  return data_ != nullptr && tensor.defined() && storage_.is_alias_of(tensor.storage()) &&
         data_ == tensor.data_ptr() && tensor.sizes() == sizes_ && tensor.strides() == strides_ &&
         version_ == tensor._version();
}

}  // namespace mixseq
