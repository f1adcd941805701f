<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en" sourcelanguage="en">
<context>
    <name>AppController</name>
    <message>
        <source>New chat</source>
        <translation>New chat</translation>
    </message>
</context>
<context>
    <name>AppOptions</name>
    <message>
        <source>Chat with a local language model.</source>
        <translation>Chat with a local language model.</translation>
    </message>
    <message>
        <source>Model file or folder (default: $PAGEDCHAT_MODEL, else %1).</source>
        <translation>Model file or folder (default: $PAGEDCHAT_MODEL, else %1).</translation>
    </message>
    <message>
        <source>Sentencepiece tokenizer model (default: beside the model).</source>
        <translation>Sentencepiece tokenizer model (default: beside the model).</translation>
    </message>
    <message>
        <source>Folder for the chat database (default: %1).</source>
        <translation>Folder for the chat database (default: %1).</translation>
    </message>
    <message>
        <source>Chat template: auto (from the model files), llama-2, chatml, zephyr, mistral, vicuna or none.</source>
        <translation>Chat template: auto (from the model files), llama-2, chatml, zephyr, mistral, vicuna or none.</translation>
    </message>
</context>
<context>
    <name>AppToolBar</name>
    <message>
        <source>System</source>
        <translation>System</translation>
    </message>
    <message>
        <source>Main tool bar</source>
        <translation>Main tool bar</translation>
    </message>
    <message>
        <source>Hide the conversation list</source>
        <translation>Hide the conversation list</translation>
    </message>
    <message>
        <source>Show the conversation list</source>
        <translation>Show the conversation list</translation>
    </message>
    <message>
        <source>PagedChat</source>
        <translation>PagedChat</translation>
    </message>
    <message>
        <source>Language: %1</source>
        <translation>Language: %1</translation>
    </message>
    <message>
        <source>Choose the language</source>
        <translation>Choose the language</translation>
    </message>
    <message>
        <source>The language of PagedChat; System follows the system settings</source>
        <translation>The language of PagedChat; System follows the system settings</translation>
    </message>
    <message>
        <source>+ Add pane</source>
        <translation>+ Add pane</translation>
    </message>
    <message>
        <source>Add a chat pane</source>
        <translation>Add a chat pane</translation>
    </message>
    <message>
        <source>Open another chat side by side (up to %1)</source>
        <translation>Open another chat side by side (up to %1)</translation>
    </message>
    <message numerus="yes">
        <source>%1 of %n panes</source>
        <translation>
            <numerusform>%1 of %n pane</numerusform>
            <numerusform>%1 of %n panes</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>AppearancePage</name>
    <message>
        <source>Appearance</source>
        <translation>Appearance</translation>
    </message>
    <message>
        <source>System</source>
        <translation>System</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>Light</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>Dark</translation>
    </message>
    <message>
        <source>Theme</source>
        <translation>Theme</translation>
    </message>
    <message>
        <source>Font size</source>
        <translation>Font size</translation>
    </message>
    <message>
        <source>Font size in pixels</source>
        <translation>Font size in pixels</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>Language</translation>
    </message>
    <message>
        <source>System follows the desktop&apos;s light or dark colours. Shortcuts: Ctrl+N new chat, Ctrl+Shift+N new pane, Ctrl+W close pane, Enter send, Shift+Enter new line, Esc stop, Ctrl+, settings.</source>
        <translation>System follows the desktop&apos;s light or dark colours. Shortcuts: Ctrl+N new chat, Ctrl+Shift+N new pane, Ctrl+W close pane, Enter send, Shift+Enter new line, Esc stop, Ctrl+, settings.</translation>
    </message>
</context>
<context>
    <name>BlindCompare</name>
    <message>
        <source>Vote once every pane has finished its answer.</source>
        <translation>Vote once every pane has finished its answer.</translation>
    </message>
    <message>
        <source>Pane %1 is not part of this comparison.</source>
        <translation>Pane %1 is not part of this comparison.</translation>
    </message>
    <message>
        <source>The vote could not be saved: %1</source>
        <translation>The vote could not be saved: %1</translation>
    </message>
</context>
<context>
    <name>ChatInput</name>
    <message>
        <source>Message input area</source>
        <translation>Message input area</translation>
    </message>
    <message>
        <source>Type a message…</source>
        <translation>Type a message…</translation>
    </message>
    <message>
        <source>Message for pane %1</source>
        <translation>Message for pane %1</translation>
    </message>
    <message>
        <source>Enter sends, Shift+Enter adds a line</source>
        <translation>Enter sends, Shift+Enter adds a line</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Stop</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>Send</translation>
    </message>
    <message>
        <source>Stop generating in pane %1</source>
        <translation>Stop generating in pane %1</translation>
    </message>
    <message>
        <source>Send message in pane %1</source>
        <translation>Send message in pane %1</translation>
    </message>
    <message>
        <source>Enter to send · Shift+Enter for a new line</source>
        <translation>Enter to send · Shift+Enter for a new line</translation>
    </message>
    <message>
        <source>Send message to all panes</source>
        <translation>Send message to all panes</translation>
    </message>
    <message>
        <source>Send to all panes</source>
        <translation>Send to all panes</translation>
    </message>
    <message>
        <source>Enter sends the message to every pane at once</source>
        <translation>Enter sends the message to every pane at once</translation>
    </message>
</context>
<context>
    <name>ChatPane</name>
    <message>
        <source>Chat pane %1</source>
        <translation>Chat pane %1</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>New chat</translation>
    </message>
</context>
<context>
    <name>ChatSession</name>
    <message>
        <source>New chat</source>
        <translation>New chat</translation>
    </message>
    <message>
        <source>No model is loaded: %1</source>
        <translation>No model is loaded: %1</translation>
    </message>
    <message>
        <source>Not sent: %1 Your text is back in the input box.</source>
        <translation>Not sent: %1 Your text is back in the input box.</translation>
    </message>
</context>
<context>
    <name>CompareBar</name>
    <message>
        <source>Blind compare</source>
        <translation>Blind compare</translation>
    </message>
    <message>
        <source>Compare the panes&apos; answers without knowing their settings.</source>
        <translation>Compare the panes&apos; answers without knowing their settings.</translation>
    </message>
    <message>
        <source>Waiting for every pane to finish…</source>
        <translation>Waiting for every pane to finish…</translation>
    </message>
    <message>
        <source>Which answer is better?</source>
        <translation>Which answer is better?</translation>
    </message>
    <message>
        <source>You voted a tie. Settings are shown again.</source>
        <translation>You voted a tie. Settings are shown again.</translation>
    </message>
    <message>
        <source>You picked %1 (pane %2). Settings are shown again.</source>
        <translation>You picked %1 (pane %2). Settings are shown again.</translation>
    </message>
    <message>
        <source>Type a prompt: it goes to every pane; labels are shuffled.</source>
        <translation>Type a prompt: it goes to every pane; labels are shuffled.</translation>
    </message>
    <message>
        <source>Blind compare mode</source>
        <translation>Blind compare mode</translation>
    </message>
    <message>
        <source>%1 is better</source>
        <translation>%1 is better</translation>
    </message>
    <message>
        <source>Tie</source>
        <translation>Tie</translation>
    </message>
    <message>
        <source>Both are as good: tie</source>
        <translation>Both are as good: tie</translation>
    </message>
</context>
<context>
    <name>ConversationDelegate</name>
    <message>
        <source>Open conversation %1</source>
        <translation>Open conversation %1</translation>
    </message>
    <message>
        <source>d MMM, hh:mm</source>
        <extracomment>Date format of a conversation&apos;s last activity (QDateTime format: day, month, time)</extracomment>
        <translation>d MMM, hh:mm</translation>
    </message>
    <message>
        <source>Last activity %1</source>
        <translation>Last activity %1</translation>
    </message>
    <message>
        <source>Delete conversation %1</source>
        <translation>Delete conversation %1</translation>
    </message>
    <message>
        <source>Delete conversation</source>
        <translation>Delete conversation</translation>
    </message>
</context>
<context>
    <name>ConversationList</name>
    <message>
        <source>Conversations</source>
        <translation>Conversations</translation>
    </message>
    <message>
        <source>Chats</source>
        <translation>Chats</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>New chat</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>New conversation</translation>
    </message>
    <message>
        <source>Conversation list</source>
        <translation>Conversation list</translation>
    </message>
    <message>
        <source>Scroll conversations</source>
        <translation>Scroll conversations</translation>
    </message>
    <message>
        <source>No conversations yet. Type a message in a pane to start one.</source>
        <translation>No conversations yet. Type a message in a pane to start one.</translation>
    </message>
</context>
<context>
    <name>EngineClient</name>
    <message>
        <source>The model could not be loaded.</source>
        <translation>The model could not be loaded.</translation>
    </message>
</context>
<context>
    <name>EngineWorker</name>
    <message>
        <source>%1 layers, dim %2, vocab %3, %4 KV blocks, chat template %5</source>
        <translation>%1 layers, dim %2, vocab %3, %4 KV blocks, chat template %5</translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation>No model is loaded.</translation>
    </message>
    <message>
        <source>The message is %1 tokens long; the model&apos;s context holds %2.</source>
        <translation>The message is %1 tokens long; the model&apos;s context holds %2.</translation>
    </message>
    <message>
        <source>Engine error: %1</source>
        <translation>Engine error: %1</translation>
    </message>
</context>
<context>
    <name>ErrorWindow</name>
    <message>
        <source>PagedChat: cannot start</source>
        <translation>PagedChat: cannot start</translation>
    </message>
    <message>
        <source>Error details</source>
        <translation>Error details</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>Quit</translation>
    </message>
    <message>
        <source>Quit PagedChat</source>
        <translation>Quit PagedChat</translation>
    </message>
</context>
<context>
    <name>GeneratingChip</name>
    <message>
        <source>Generating</source>
        <translation>Generating</translation>
    </message>
</context>
<context>
    <name>Main</name>
    <message>
        <source>PagedChat</source>
        <translation>PagedChat</translation>
    </message>
    <message>
        <source>The model could not be loaded: %1</source>
        <translation>The model could not be loaded: %1</translation>
    </message>
    <message>
        <source>Scroll chat panes</source>
        <translation>Scroll chat panes</translation>
    </message>
</context>
<context>
    <name>MessageBubble</name>
    <message>
        <source>interrupted</source>
        <translation>interrupted</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>stopped</translation>
    </message>
    <message>
        <source>length limit reached</source>
        <translation>length limit reached</translation>
    </message>
    <message>
        <source>(no reply — interrupted)</source>
        <translation>(no reply — interrupted)</translation>
    </message>
    <message>
        <source>(no reply — stopped)</source>
        <translation>(no reply — stopped)</translation>
    </message>
    <message>
        <source>(no reply)</source>
        <translation>(no reply)</translation>
    </message>
    <message>
        <source>You: %1</source>
        <translation>You: %1</translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation>Model: %1</translation>
    </message>
</context>
<context>
    <name>MessageContent</name>
    <message>
        <source>code</source>
        <translation>code</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>Copied</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Copy</translation>
    </message>
    <message>
        <source>Copy the %1 code</source>
        <translation>Copy the %1 code</translation>
    </message>
    <message>
        <source>Copy the code</source>
        <translation>Copy the code</translation>
    </message>
    <message>
        <source>Scroll the code sideways</source>
        <translation>Scroll the code sideways</translation>
    </message>
    <message>
        <source>Code: %1</source>
        <translation>Code: %1</translation>
    </message>
</context>
<context>
    <name>MessageList</name>
    <message>
        <source>Messages in pane %1</source>
        <translation>Messages in pane %1</translation>
    </message>
    <message>
        <source>Scroll messages</source>
        <translation>Scroll messages</translation>
    </message>
    <message>
        <source>Start a story: type its first words below and press Enter.</source>
        <translation>Start a story: type its first words below and press Enter.</translation>
    </message>
</context>
<context>
    <name>PaneHeader</name>
    <message>
        <source>Pane %1 conversation: %2</source>
        <translation>Pane %1 conversation: %2</translation>
    </message>
    <message>
        <source>Close pane %1</source>
        <translation>Close pane %1</translation>
    </message>
    <message>
        <source>%1 tok/s</source>
        <translation>%1 tok/s</translation>
    </message>
    <message>
        <source>Answer %1</source>
        <translation>Answer %1</translation>
    </message>
    <message>
        <source>Blind compare</source>
        <translation>Blind compare</translation>
    </message>
    <message>
        <source>Settings of pane %1</source>
        <translation>Settings of pane %1</translation>
    </message>
    <message>
        <source>Hidden until you vote</source>
        <translation>Hidden until you vote</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>Settings</translation>
    </message>
    <message>
        <source>Close this pane (Ctrl+W)</source>
        <translation>Close this pane (Ctrl+W)</translation>
    </message>
    <message>
        <source>Speed: %1</source>
        <translation>Speed: %1</translation>
    </message>
    <message>
        <source>Context %1 / %2 (%3%)</source>
        <translation>Context %1 / %2 (%3%)</translation>
    </message>
    <message>
        <source>Context almost full: %1</source>
        <translation>Context almost full: %1</translation>
    </message>
    <message>
        <source>Context use: %1</source>
        <translation>Context use: %1</translation>
    </message>
    <message>
        <source>Context use of pane %1</source>
        <translation>Context use of pane %1</translation>
    </message>
    <message>
        <source>Context — / %1</source>
        <translation>Context — / %1</translation>
    </message>
</context>
<context>
    <name>PaneSettings</name>
    <message>
        <source>temperature %1 · top-p %2 · top-k %3 · min-p %4 · repetition %5 · max %6 tokens · seed %7</source>
        <translation>temperature %1 · top-p %2 · top-k %3 · min-p %4 · repetition %5 · max %6 tokens · seed %7</translation>
    </message>
    <message>
        <source>off</source>
        <translation>off</translation>
    </message>
    <message>
        <source>random</source>
        <translation>random</translation>
    </message>
    <message>
        <source>%1 must be a number.</source>
        <translation>%1 must be a number.</translation>
    </message>
    <message>
        <source>%1 must be between %2 and %3.</source>
        <translation>%1 must be between %2 and %3.</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>Temperature</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <source>Repetition penalty</source>
        <translation>Repetition penalty</translation>
    </message>
    <message>
        <source>Top-k must be a whole number from 0 (off) to %1.</source>
        <translation>Top-k must be a whole number from 0 (off) to %1.</translation>
    </message>
    <message>
        <source>Max tokens must be a whole number from 1 to %1.</source>
        <translation>Max tokens must be a whole number from 1 to %1.</translation>
    </message>
    <message>
        <source>Seed must be &quot;random&quot; or a whole number of 0 or more.</source>
        <translation>Seed must be &quot;random&quot; or a whole number of 0 or more.</translation>
    </message>
</context>
<context>
    <name>PaneSettingsPopup</name>
    <message>
        <source>Settings of pane %1</source>
        <translation>Settings of pane %1</translation>
    </message>
    <message>
        <source>Pane settings</source>
        <translation>Pane settings</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>System prompt</translation>
    </message>
    <message>
        <source>Instructions put before every conversation in this pane</source>
        <translation>Instructions put before every conversation in this pane</translation>
    </message>
    <message>
        <source>Temperature (0–2)</source>
        <translation>Temperature (0–2)</translation>
    </message>
    <message>
        <source>Top-p (0.01–1)</source>
        <translation>Top-p (0.01–1)</translation>
    </message>
    <message>
        <source>Top-k (0 = off)</source>
        <translation>Top-k (0 = off)</translation>
    </message>
    <message>
        <source>Min-p (0–1)</source>
        <translation>Min-p (0–1)</translation>
    </message>
    <message>
        <source>Repetition penalty (0.5–2)</source>
        <translation>Repetition penalty (0.5–2)</translation>
    </message>
    <message>
        <source>Max tokens</source>
        <translation>Max tokens</translation>
    </message>
    <message>
        <source>Seed (&quot;random&quot; or a number)</source>
        <translation>Seed (&quot;random&quot; or a number)</translation>
    </message>
    <message>
        <source>Defaults</source>
        <translation>Defaults</translation>
    </message>
    <message>
        <source>Reset the sampling settings to the defaults</source>
        <translation>Reset the sampling settings to the defaults</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancel</translation>
    </message>
    <message>
        <source>Close without changes</source>
        <translation>Close without changes</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>Apply</translation>
    </message>
    <message>
        <source>Apply the settings</source>
        <translation>Apply the settings</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>Settings</source>
        <translation>Settings</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Close</translation>
    </message>
    <message>
        <source>Close the settings</source>
        <translation>Close the settings</translation>
    </message>
    <message>
        <source>Settings pages</source>
        <translation>Settings pages</translation>
    </message>
</context>
<context>
    <name>StatusLine</name>
    <message>
        <source>Loading %1…</source>
        <translation>Loading %1…</translation>
    </message>
    <message>
        <source>No model loaded</source>
        <translation>No model loaded</translation>
    </message>
    <message numerus="yes">
        <source>%n running</source>
        <translation>
            <numerusform>%n running</numerusform>
            <numerusform>%n running</numerusform>
        </translation>
    </message>
    <message>
        <source>idle</source>
        <translation>idle</translation>
    </message>
    <message>
        <source>Model: %1  ·  %2 tok/s  ·  %3</source>
        <translation>Model: %1  ·  %2 tok/s  ·  %3</translation>
    </message>
    <message>
        <source>Engine status</source>
        <translation>Engine status</translation>
    </message>
    <message>
        <source>Model details</source>
        <translation>Model details</translation>
    </message>
    <message>
        <source>Data: %1</source>
        <translation>Data: %1</translation>
    </message>
    <message>
        <source>Data folder</source>
        <translation>Data folder</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>PagedChat could not open its chat data.</source>
        <translation>PagedChat could not open its chat data.</translation>
    </message>
    <message>
        <source>Check that folder, or start PagedChat with --data-dir DIR to use another one.</source>
        <translation>Check that folder, or start PagedChat with --data-dir DIR to use another one.</translation>
    </message>
</context>
</TS>
