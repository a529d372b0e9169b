"""What the prose of 05-self-attention says, and the values it rests on."""
from claims import Claim

CLAIMS = [
    Claim(quote="With a single shared matrix, most words mostly look at themselves",
          value="np.mean(shared)", low=0.6, every_seed=True),
    Claim(quote="Separate $W_q$ and $W_k$ give the asymmetric relation", value="np.mean(separate)",
          high=0.25, every_seed=True),
    Claim(quote="Without a mask the output of *was* does not change: it only moves with its word",
          value="max(moved['outputs'], moved['weights'])", high=1e-12, every_seed=True),
    Claim(quote="it breaks the symmetry, as the last line of the run shows", value="moved['causal']",
          low=0.1, every_seed=True),
    Claim(quote="*was* splits its weight evenly between *cat* and *mouse*",
          value="abs(noun_only_weights[1] - noun_only_weights[5])", high=1e-9, every_seed=True),
    Claim(quote="*was* splits its weight evenly between *cat* and *mouse*",
          value="min(noun_only_weights[1], noun_only_weights[5])", low=0.49, every_seed=True),
    Claim(quote="Matching number breaks the tie exactly when the attractors have the other number",
          value="number_match['opposite']", low=1.0, every_seed=True),
    Claim(quote="and not at all when they agree with the subject", value="number_match['same']", high=0.0,
          every_seed=True),
    Claim(quote="and at least half of its weight (0.5) goes to the subject, in every sentence of up to 25 words",
          value="min(r['min_subject_weight'] for r in held_out.values())", low=0.5, every_seed=True),
    Claim(quote="the accuracy stays at 100 %", value="min(r['accuracy'] for r in held_out.values())", low=1.0,
          every_seed=True),
    Claim(quote="*was* puts most of its weight on *cat*",
          value="A[sentence.verb][list(sentence.words).index('cat')]", low=0.5, every_seed=True),
]
