"""FuRePA prompts, verbatim from the paper's Appendix A ("Furthest Reasoning with Plan Assessment"):
the first iteration asks only for a query; later iterations see only the evidence E_t and the question
(earlier reasoning and queries are masked). The typo "know as Jim Lane" is the paper's."""

FIRST_SYSTEM = ("You are given problems requiring multi-step searching and reasoning. You should follow the examples and "
                "tell me what information to search first accurately.")
FIRST_USER = ("To solve this multi-hop problem: {question} What specific information should I search from wiki at first "
              "step? Search for one target at first.")
FIRST_EXAMPLES = [
    ("What was the name of the Infantry that was commanded by a Senator who was know as Jim Lane?",
     "[Search] the Senator who was known as Jim Lane"),
    ("Which person born on March 23, 1902 did George Roby Dempster have political battles with?",
     "[Search] the person George Roby Dempster have political battles with"),
    ("Do director of film Swami Dada and director of film Common Clay (1930 Film) have the same nationality?",
     "[Search] the nationality of director of film Swami Dada"),
    ("How many square miles is the state that houses the university that Joseph L. Badaracco attended?",
     "[Search] the university Joseph L. Badaracco attended"),
    ("The Tudor-style Norfolk Hotel, now run by the Fairmont group, is a landmark in the capital city of which west "
     "African country?",
     "[Search] the Tudor-style Norfolk Hotel, now run by the Fairmont group, is a landmark in what city"),
]

LATTER_SYSTEM = ("You are given problems requiring multi-step searching and reasoning with related contexts. You should "
                 "tell me the answer if all necessary information is provided in the context, otherwise tell me what "
                 "specific information to search next. Don\u2019t answer with uncertainty. Lines only start with "
                 "\u2018[Analysis]\u2019 or \u2018[Answer]\u2019 or \u2018[Search]\u2019.")
LATTER_USER = "Context:\n{context}\nQuestion:\n{question}"
LATTER_EXAMPLES = [
    ("Saint Motel: The band consists of A/J Jackson (lead vocals, guitar, piano), Aaron Sharp (lead guitar), Dak "
     "Lerdamornpong (bass), and Greg Erwin (drums). Curve Lake First Nation: The Curve Lake First Nation registered a "
     "population on these three reserves of 741, with an additional 1,050 registered band members living off-reserve.",
     "Which band has more members, Saint Motel or Curve?",
     "[Analysis] According to the context, we now know Saint Motel has 3 members. The context provides information about "
     "Curve Lake First Nation, not the band. We still need information about the band Curve.\n"
     "[Search] the number of members in the band Curve"),
    ("Dhyanchand Stadium is a cricket ground in Jhansi, India. The stadium is named after Major Dhyan Chand who lived in "
     "Jhansi. Dhyan Chand: He is known for his extraordinary goal-scoring feats, in addition to earning three Olympic "
     "gold medals (1928, 1932, and 1936) in field hockey, during an era where India was the most dominant team in Hockey.",
     "Where is the stadium located which is named after the man who won three Olympic gold medals in 1928, 1932, and 1936?",
     "[Analysis] The man who won three Olympic gold medals in 1928, 1932, and 1936 is Dhyan Chand. The stadium named "
     "after him is Dhyanchand Stadium. Dhyanchand Stadium is located in Jhansi, India. Then we get the answer to the "
     "question.\n[Answer] Jhansi, India"),
    ("Matthias W. Day (August 8, 1853 \u2013 September 12, 1927) was a career American army officer who received the "
     "Medal of Honor, the United States\u2019 highest military decoration, for his actions during the American Indian "
     "Wars in the latter half of the 19th century. Day was a longtime officer with the African-American 9th Cavalry "
     "Regiment, seeing action during the Apache Wars against the Apache leaders Victorio and Geronimo.",
     "In 2010, who controlled the Senate and the body who presides over any impeachment trial of the president of the "
     "country Matthias W. Day holds citizenship in",
     "[Analysis] Matthias W. Day holds citizenship in the United States. Then we need to know the body who presides over "
     "any impeachment trial of the president of the United States?\n"
     "[Search] Who presides over any impeachment trial of the president of the United States"),
    ("The Oberoi family is an Indian family that is famous for its involvement in hotels, namely through The Oberoi Group.",
     "The Oberoi family is part of a hotel company that has a head office in what city?",
     "[Analysis] The Oberoi family is part of the hotel company called The Oberoi Group. Then we need to know the Oberoi "
     "Group has a head office in what city.\n[Search] the Oberoi Group has a head office in what city"),
    ("\"Human Error\" is the twenty-fourth episode and season finale of the third season of \"House\" and the seventieth "
     "episode overall. House (also called House, M.D.) is an American television medical drama that originally ran on "
     "the Fox network for eight seasons, from November 16, 2004 to May 21, 2012.",
     "\"Human Error\" is the season finale of the third season of a tv show that aired on what network?",
     "[Analysis] \"Human Error\" is the season finale of the third season of \"House\". The tv show \"House\" ran on the "
     "Fox network. Then we get the answer.\n[Answer] Fox network"),
]

# `constrained_actions`: each plan under a llama.cpp grammar (GBNF), in the examples' shape. The first iteration
# searches; a later one analyses, then searches or answers; the forced answer at T answers.
# Lengths are bounded as in the ReAct grammar (PLAN_TOKENS is 160), and blank lines may separate the two lines.
FIRST_GRAMMAR = r"""root ::= "[Search] " [^\n]{1,200}
"""
LATTER_GRAMMAR = r"""root ::= "[Analysis] " [^\n]{1,400} "\n"+ ("[Search] " | "[Answer] ") [^\n]{1,150}
"""
ANSWER_GRAMMAR = r"""root ::= "[Analysis] " [^\n]{1,400} "\n"+ "[Answer] " [^\n]{1,150}
"""

# At the iteration cap T without an answer (the paper: "the answer will be forcibly generated").
FORCE_ANSWER = "\nYou must answer now: reply with one [Analysis] line and one [Answer] line."
