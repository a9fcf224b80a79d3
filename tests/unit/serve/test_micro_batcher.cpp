#include "mixseq/serve/micro_batcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

using MicroBatcher = TranslationBatcher;
using BatchResults = TranslationBatcher::Results;
using BatchRequest = TranslationBatcher::Request;

// A stand-in for the model: "x" -> "T(x)", scored with the beam size of its batch's search, and
// a record of every batch it was given. A batch holding "gate" waits for gate_open, so a test
// can queue requests while the worker is busy and know what the next batch will find.
struct FakeModel {
  std::mutex mutex;
  std::vector<std::vector<std::string>> batches;
  std::chrono::milliseconds delay{0};
  std::promise<void> gate_open;

  TranslationBatcher::RunBatch translate() {
    return [this](const std::vector<std::string>& sources, const BeamSearchOptions& search) {
      std::this_thread::sleep_for(delay);
      if (sources.front() == "gate") gate_open.get_future().wait();
      {
        const std::lock_guard<std::mutex> lock(mutex);
        batches.push_back(sources);
      }
      BatchResults results;
      for (const auto& source : sources)
        results.push_back({TextHypothesis{"T(" + source + ")", static_cast<double>(search.beam_size), 1, {}, {}}});
      return results;
    };
  }
};

BatchRequest request_of(std::vector<std::string> sources, int64_t beam_size = 1) {
  BatchRequest request;
  request.cost = static_cast<int64_t>(sources.size());
  request.items = std::move(sources);
  request.settings.beam_size = beam_size;
  return request;
}

TEST(MicroBatcher, ManyClientsEachGetTheirOwnSentencesInOrder) {
  FakeModel model;
  MicroBatcherOptions options;
  options.max_batch_cost = 40;
  options.max_wait_ms = 2;
  MicroBatcher batcher(options, model.translate());
  std::atomic<int> wrong{0};
  std::vector<std::thread> clients;
  for (int client = 0; client < 16; ++client) {
    clients.emplace_back([&, client] {
      for (int r = 0; r < 50; ++r) {
        std::vector<std::string> sources;
        for (int s = 0; s < 1 + (client + r) % 5; ++s)
          sources.push_back(std::to_string(client) + "/" + std::to_string(r) + "/" + std::to_string(s));
        const auto results = batcher.submit(request_of(sources)).get();
        bool ok = results.size() == sources.size();
        for (size_t s = 0; ok && s < sources.size(); ++s)
          ok = results[s].size() == 1 && results[s][0].text == "T(" + sources[s] + ")";
        if (!ok) ++wrong;
      }
    });
  }
  for (auto& client : clients) client.join();
  EXPECT_EQ(wrong, 0);
  size_t sentences = 0, largest = 0;
  for (const auto& batch : model.batches) {
    sentences += batch.size();
    largest = std::max(largest, batch.size());
    EXPECT_LE(batch.size(), 40u);
  }
  EXPECT_EQ(sentences, 16u * (50 / 5) * (1 + 2 + 3 + 4 + 5));  // each sentence translated once
  EXPECT_GT(largest, 5u) << "no batch joined two clients' requests";
}

TEST(MicroBatcher, RequestsArrivingWithinTheWaitShareOneBatch) {
  FakeModel model;
  MicroBatcher batcher({/*max_batch_cost=*/100, /*max_wait_ms=*/500}, model.translate());
  std::vector<std::future<BatchResults>> futures;
  for (const char* source : {"a", "b", "c", "d"}) futures.push_back(batcher.submit(request_of({source})));
  for (auto& future : futures) future.get();
  ASSERT_EQ(model.batches.size(), 1u);
  EXPECT_EQ(model.batches[0], (std::vector<std::string>{"a", "b", "c", "d"}));  // in arrival order
}

TEST(MicroBatcher, ABatchHoldsAtMostMaxBatchTokensUnlessOneRequestIsBigger) {
  FakeModel model;
  MicroBatcher batcher({/*max_batch_cost=*/4, /*max_wait_ms=*/0}, model.translate());
  auto gate = batcher.submit(request_of({"gate"}));
  while (batcher.queued_requests() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // taken
  std::vector<std::future<BatchResults>> futures;
  futures.push_back(batcher.submit(request_of({"a", "b", "c"})));
  futures.push_back(batcher.submit(request_of({"d", "e"})));            // does not fit beside the first
  futures.push_back(batcher.submit(request_of({"f"})));                 // fits beside the first
  futures.push_back(batcher.submit(request_of({"g", "h", "i", "j", "k"})));  // alone: more than 4
  model.gate_open.set_value();
  gate.get();
  for (auto& future : futures) future.get();
  ASSERT_EQ(model.batches.size(), 4u);
  EXPECT_EQ(model.batches[1], (std::vector<std::string>{"a", "b", "c", "f"}));
  EXPECT_EQ(model.batches[2], (std::vector<std::string>{"d", "e"}));
  EXPECT_EQ(model.batches[3], (std::vector<std::string>{"g", "h", "i", "j", "k"}));
}

TEST(MicroBatcher, RequestsWithOtherSearchOptionsAreNotMixed) {
  FakeModel model;
  MicroBatcher batcher({/*max_batch_cost=*/100, /*max_wait_ms=*/300}, model.translate());
  auto greedy1 = batcher.submit(request_of({"a"}, 1));
  auto beam = batcher.submit(request_of({"b"}, 4));
  auto greedy2 = batcher.submit(request_of({"c"}, 1));
  EXPECT_EQ(greedy1.get()[0][0].score, 1.0);
  EXPECT_EQ(beam.get()[0][0].score, 4.0);
  EXPECT_EQ(greedy2.get()[0][0].score, 1.0);
  ASSERT_EQ(model.batches.size(), 2u);
  EXPECT_EQ(model.batches[0], (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(model.batches[1], (std::vector<std::string>{"b"}));
}

TEST(MicroBatcher, AnErrorReachesItsBatchAndTheWorkerGoesOn) {
  std::atomic<int> calls{0};
  MicroBatcher batcher({/*max_batch_cost=*/100, /*max_wait_ms=*/0},
                       [&](const std::vector<std::string>& sources, const BeamSearchOptions&) {
                         if (++calls == 1) throw Error("model failed");
                         return BatchResults(sources.size(), {TextHypothesis{"ok", 0, 1, {}, {}}});
                       });
  auto failed = batcher.submit(request_of({"a"}));
  EXPECT_THROW(failed.get(), Error);
  EXPECT_EQ(batcher.submit(request_of({"b"})).get()[0][0].text, "ok");
}

// A batch whose run throws is run again one request at a time: only the request whose own item
// the model fails on gets the error; the requests that shared its batch get their results.
TEST(MicroBatcher, OneRequestsFailureIsItsOwnNotItsBatchs) {
  std::promise<void> gate_open;
  const std::shared_future<void> opened = gate_open.get_future().share();
  std::vector<std::vector<std::string>> runs;
  MicroBatcher batcher({/*max_batch_cost=*/100, /*max_wait_ms=*/0},
                       [&](const std::vector<std::string>& sources, const BeamSearchOptions& search) {
                         if (sources.front() == "gate") opened.wait();
                         runs.push_back(sources);
                         for (const auto& source : sources)
                           if (source == "bad") throw Error("the model failed on \"bad\"");
                         BatchResults results;
                         for (const auto& source : sources)
                           results.push_back({TextHypothesis{"T(" + source + ")", 0, 1, {}, {}}});
                         (void)search;
                         return results;
                       });
  auto gate = batcher.submit(request_of({"gate"}));  // holds the worker while the next three queue
  while (batcher.queued_requests() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto first = batcher.submit(request_of({"a", "b"}));
  auto bad = batcher.submit(request_of({"bad"}));
  auto last = batcher.submit(request_of({"c"}));
  while (batcher.queued_requests() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  gate_open.set_value();
  EXPECT_EQ(gate.get()[0][0].text, "T(gate)");
  const auto a_b = first.get();
  ASSERT_EQ(a_b.size(), 2u);
  EXPECT_EQ(a_b[0][0].text, "T(a)");
  EXPECT_EQ(a_b[1][0].text, "T(b)");
  EXPECT_EQ(last.get()[0][0].text, "T(c)");
  try {
    bad.get();
    ADD_FAILURE() << "the bad request got results";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "the model failed on \"bad\"");
  }
  // The three shared one batch, which failed; then each ran alone.
  ASSERT_EQ(runs.size(), 5u);
  EXPECT_EQ(runs[1], (std::vector<std::string>{"a", "b", "bad", "c"}));
  EXPECT_EQ(runs[2], (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(runs[3], (std::vector<std::string>{"bad"}));
  EXPECT_EQ(runs[4], (std::vector<std::string>{"c"}));
}

TEST(MicroBatcher, ShutdownAnswersEverySubmittedRequestThenRefusesNewOnes) {
  FakeModel model;
  model.delay = std::chrono::milliseconds(20);
  MicroBatcher batcher({/*max_batch_cost=*/2, /*max_wait_ms=*/50}, model.translate());
  std::vector<std::future<BatchResults>> futures;
  for (int i = 0; i < 6; ++i) futures.push_back(batcher.submit(request_of({std::to_string(i)})));
  batcher.shutdown();
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(futures[i].wait_for(std::chrono::seconds(0)), std::future_status::ready);
    EXPECT_EQ(futures[i].get()[0][0].text, "T(" + std::to_string(i) + ")");
  }
  EXPECT_EQ(batcher.queued_requests(), 0);
  EXPECT_THROW(batcher.submit(request_of({"late"})), Error);
}

// The batcher /transcribe uses: utterances of samples in, one transcript each out, any requests
// in one batch, the cost counted in the caller's unit.
TEST(MicroBatcher, BatchesUtterancesOfAnyRequestsForTranscription) {
  std::mutex mutex;
  std::vector<size_t> batch_sizes;
  TranscriptionBatcher batcher({/*max_batch_cost=*/1000, /*max_wait_ms=*/300},
                               [&](const std::vector<std::vector<float>>& audio, const AnyBatch&) {
                                 {
                                   const std::lock_guard<std::mutex> lock(mutex);
                                   batch_sizes.push_back(audio.size());
                                 }
                                 std::vector<Transcript> transcripts;
                                 for (const auto& samples : audio) {
                                   Transcript transcript;
                                   transcript.text = std::to_string(samples.size());
                                   transcripts.push_back(std::move(transcript));
                                 }
                                 return transcripts;
                               });
  std::vector<std::future<TranscriptionBatcher::Results>> futures;
  for (size_t n : {3u, 5u, 7u}) {
    TranscriptionBatcher::Request request;
    request.items = {std::vector<float>(n, 0.5f)};
    request.cost = static_cast<int64_t>(n);
    futures.push_back(batcher.submit(std::move(request)));
  }
  EXPECT_EQ(futures[0].get()[0].text, "3");
  EXPECT_EQ(futures[1].get()[0].text, "5");
  EXPECT_EQ(futures[2].get()[0].text, "7");
  EXPECT_EQ(batch_sizes, (std::vector<size_t>{3}));
}

TEST(MicroBatcher, BadOptionsAreErrorsNamingThem) {
  const auto run = [](const std::vector<std::string>& s, const BeamSearchOptions&) { return BatchResults(s.size()); };
  EXPECT_THROW(MicroBatcher({/*max_batch_cost=*/0, /*max_wait_ms=*/0}, run), Error);
  EXPECT_THROW(MicroBatcher({/*max_batch_cost=*/1, /*max_wait_ms=*/-1}, run), Error);
}

}  // namespace
}  // namespace mixseq
