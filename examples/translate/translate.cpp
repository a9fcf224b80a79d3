// Translates standard input, one sentence a line, with the checkpoint named on the command line,
// and writes the translations as `mixseq translate -c <checkpoint>` does.
//   translate <checkpoint.pt> [beam size] < sentences.txt
#include <mixseq/mixseq.h>

#include <exception>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: " << argv[0] << " <checkpoint.pt> [beam size] < sentences.txt\n";
    return 2;
  }
  try {
    mixseq::Translator translator(argv[1]);
    mixseq::TranslationOptions options;  // unset: the checkpoint's stored search
    if (argc == 3) options.beam_size = std::stoll(argv[2]);

    std::vector<std::string> sentences;
    for (std::string line; std::getline(std::cin, line);) sentences.push_back(line);
    for (const auto& result : translator.translate_batch(sentences, options)) std::cout << result.text << '\n';
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << '\n';
    return 1;
  }
}
