"""What the prose of 06-multi-head says, and the values it rests on."""
from claims import Claim, Published

THE = "[i for i, w in enumerate(tokens) if w == 'the']"

CLAIMS = [
    Claim(quote="the second *the* splits its weight evenly over the three *the*s, about a third each",
          value=f"np.abs(weights_sent[3][{THE}[1]][{THE}] - 1 / 3).max()", high=0.02, every_seed=True),
    Claim(quote="Four heads serve four requests at full strength, for the same parameters",
          value="mass_4 - mass_1", low=0.3, every_seed=True),
    Claim(quote="Zero, up to rounding", value="equivariance_gap", high=1e-12, every_seed=True),
    Claim(quote="The output at *chased* cannot depend on who chased whom", value="chased_difference",
          high=1e-12, every_seed=True),
]

PUBLISHED = [
    Published(quote="a single head was 0.9 BLEU worse than their 8-head setting",
              source="Vaswani et al. (2017), NeurIPS, Table 3, rows (A): 24.9 against 25.8 BLEU on "
                     "newstest2013 English-German"),
    Published(quote="pruning 38 of 48 encoder heads cost only 0.15 BLEU",
              source="Voita, Talbot, Moiseev, Sennrich & Titov (2019), ACL, English-Russian WMT"),
]
