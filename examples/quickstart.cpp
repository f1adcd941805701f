// vLLM's quick start as a C++ program (docs.vllm.ai, "Offline batched inference"):
//
//   llm = LLM(model="meta-llama/Meta-Llama-3.1-8B", dtype="bfloat16")
//   outputs = llm.generate(prompt)
//   print(outputs[0].outputs[0].text)
//
// Usage: quickstart MODEL [PROMPT]
//   MODEL  a Hugging Face folder as the hub ships it (config.json, *.safetensors, tokenizer.json),
//          a GGUF file or a llama2.c checkpoint. Nothing is downloaded: give a local path.
//   PROMPT default "Hello, my name is".
// Prints the prompt and the generated text (the model's generation_config.json sampling defaults,
// as vLLM applies them; 16 tokens unless it sets max_new_tokens). Exit status 1 with the reason
// on stderr when the model cannot be loaded.
#include <exception>
#include <iostream>
#include <string>

#include "engine/llm.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: quickstart MODEL [PROMPT]\n";
    return 2;
  }
  const std::string model = argv[1];
  const std::string prompt = argc == 3 ? argv[2] : "Hello, my name is";
  try {
    pagedchat::LLM llm({.model = model, .dtype = pagedchat::WeightDType::kBFloat16});
    auto outputs = llm.generate(prompt);
    std::cout << "Prompt: " << outputs[0].prompt << "\n";
    std::cout << "Generated text: " << outputs[0].outputs[0].text << "\n";
  } catch (const std::exception& e) {
    std::cerr << "quickstart: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
